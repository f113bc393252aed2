import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Account } from '../auth/account.js';
import type { KeyStore } from '../auth/key-store.js';
import { ApiError } from '../errors.js';

/**
 * The key comes in header X-Service-Api-Key, its alias X-Dune-Api-Key (what the official
 * clients send), or query parameter api_key. A missing or unknown key is the same 401.
 */
export function presentedKey(req: Request): string | undefined {
  const header = headerKey(req.headers);
  if (header !== undefined) return header;
  const query = req.query.api_key;
  return typeof query === 'string' ? query : undefined;
}

/** The key of the headers alone (the metrics endpoint's fast lane leaves `api_key` to express). */
export function headerKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-service-api-key'] ?? headers['x-dune-api-key'];
  return typeof header === 'string' ? header : undefined;
}

/** Where a request's key came from, for the 401 that names where to send one. */
function keySource(req: Request): string {
  if (req.headers['x-service-api-key'] !== undefined) return 'the X-Service-Api-Key header';
  if (req.headers['x-dune-api-key'] !== undefined) return 'the X-Dune-Api-Key header';
  return 'the api_key query parameter';
}

/** No key at all (or an empty one): say where one goes. */
export const missingKey = () =>
  new ApiError(
    'unauthorized',
    'missing API key: send it in the X-Service-Api-Key header (X-Dune-Api-Key and ?api_key= work too); a first start prints a local key and saves it in DATA_DIR/dev-api-key.txt',
  );

/**
 * A key no account has: the mirrored API's words first (`invalid API Key`), then which key was
 * read, so a key sent in the wrong place or with a typo is told from one never sent.
 */
export const invalidKey = (source = 'the X-Service-Api-Key header') =>
  new ApiError(
    'unauthorized',
    `invalid API Key: the key in ${source} is not a key of this service; send a key made by \`keys create\` (or the local key printed at start) in the X-Service-Api-Key header`,
  );

export function authenticate(keys: KeyStore) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (res.locals.account) {
      next(); // Already identified by authFailureLimit in front of the routes.
      return;
    }
    const key = presentedKey(req);
    if (key === undefined || key === '') {
      next(missingKey());
      return;
    }
    const account = keys.authenticate(key);
    if (!account) {
      next(invalidKey(keySource(req)));
      return;
    }
    res.locals.account = account;
    next();
  };
}

export function accountOf(res: Response): Account {
  const account = res.locals.account as Account | undefined;
  if (!account) throw new Error('route used without authenticate()');
  return account;
}

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

export const invalidKey = () => new ApiError('unauthorized', 'invalid API Key');

export function authenticate(keys: KeyStore) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (res.locals.account) {
      next(); // Already identified by authFailureLimit in front of the routes.
      return;
    }
    const key = presentedKey(req);
    const account = key === undefined ? undefined : keys.authenticate(key);
    if (!account) {
      next(invalidKey());
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

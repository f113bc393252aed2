import type { RequestHandler, Response } from 'express';
import type { Account } from '../auth/account.js';
import type { KeyStore } from '../auth/key-store.js';
import { ApiError } from '../errors.js';
import { identityOf, mountStep } from './express-door.js';
import { keySource } from './presented-key.js';
import type { RequestStep } from './request-step.js';

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

/**
 * The last step before a route answers (express: each API route names it first; the fast lane:
 * before its route): the account of the key, or the 401 that says what was wrong with it.
 * Usually the failed-authentication limit identified the key already.
 */
export function authenticateStep(keys: KeyStore): RequestStep {
  return {
    name: 'authenticate',
    run(exchange, next) {
      if (exchange.identity) {
        next();
        return;
      }
      const key = exchange.key;
      if (key === undefined || key === '') {
        next(missingKey());
        return;
      }
      const identity = keys.identify(key);
      if (!identity) {
        next(invalidKey(keySource(exchange.req)));
        return;
      }
      exchange.identity = identity;
      next();
    },
  };
}

/** authenticateStep, for an express route. */
export function authenticate(keys: KeyStore): RequestHandler {
  return mountStep(authenticateStep(keys));
}

export function accountOf(res: Response): Account {
  const account = identityOf(res)?.account;
  if (!account) throw new Error('route used without authenticate()');
  return account;
}

import type { NextFunction, Request, Response } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Identity, KeyStore } from '../auth/key-store.js';
import { ApiError } from '../errors.js';
import { presentedKey } from './authenticate.js';

/**
 * Failed authentications per client address (AUTH_FAILURE_LIMIT per minute): a request
 * without a key or with an unknown one counts; past the limit the address gets 429 with
 * Retry-After until its minute is over. Without it a client could try thousands of keys a
 * second (issue 16: 3,000 in 2.3 s), and a key may be as short as 8 characters.
 *
 * While an address is over its limit the keys it sends are not checked: a guess answered
 * 200 when right would make the limit useless. A key that already authenticated from that
 * address before is still served, so the clients of a shared address (a proxy, a NAT) whose
 * keys work are not slowed by someone guessing behind the same address; a successful
 * request never counts.
 *
 * It runs first on every API route and identifies the key once for what follows (the rate
 * limits, the routes' authenticate()).
 */

const WINDOW_SECONDS = 60;
/** Pairs of address and key seen authenticating, most recent last; oldest dropped past this. */
const MAX_KNOWN_PAIRS = 10_000;
/** Blocked addresses remembered; past this the expired, then the oldest, are dropped. */
const MAX_BLOCKED_ADDRESSES = 10_000;

export interface AuthFailureLimit {
  /** The middleware in front of every API route. */
  middleware: (req: Request, res: Response, next: NextFunction) => void | Promise<void>;
  /**
   * Whether a request with a key that identified passes without anything to count or refuse
   * (no limit, the address not blocked, or this key known from it); remembers the pair. The
   * metrics endpoint's fast lane asks this and leaves every other request to the middleware.
   */
  passes(address: string, identity: Identity): boolean;
}

export function authFailureLimit(limit: number | undefined, keys: KeyStore): AuthFailureLimit {
  const failures =
    limit === undefined ? undefined : new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS });
  /** Address → when its block ends (ms): checked without a promise on every request. */
  const blockedUntil = new Map<string, number>();
  const known = new Set<string>();

  const remember = (pair: string) => {
    if (known.has(pair)) return;
    known.add(pair);
    if (known.size > MAX_KNOWN_PAIRS) known.delete(known.values().next().value as string);
  };

  /** When the address's block ends, if it is blocked now. */
  const blockEnd = (address: string): number | undefined => {
    const until = blockedUntil.get(address);
    if (until === undefined || until > Date.now()) return until;
    blockedUntil.delete(address);
    return undefined;
  };

  /** For a key that identified: when the address's block ends if it refuses this key, else undefined. */
  const refusedUntil = (address: string, identity: Identity): number | undefined => {
    const pair = `${address}\u0000${identity.keyId}`;
    const until = blockEnd(address);
    if (until !== undefined && !known.has(pair)) return until;
    remember(pair);
    return undefined;
  };
  const passes = (address: string, identity: Identity) =>
    !failures || refusedUntil(address, identity) === undefined;

  const refuse = (next: NextFunction, until: number) => {
    const seconds = String(Math.max(1, Math.ceil((until - Date.now()) / 1000)));
    next(
      new ApiError(
        'rate_limited',
        `too many failed authentications from this address: at most ${limit} per minute; retry in ${seconds} s`,
        { 'Retry-After': seconds },
      ),
    );
  };

  /** A request without a key that identified: one failure more for its address. */
  const countFailure = async (address: string, next: NextFunction): Promise<void> => {
    try {
      await (failures as RateLimiterMemory).consume(address);
      next(); // The route answers 401.
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      const blockEnds = Date.now() + error.msBeforeNext;
      blockedUntil.set(address, blockEnds);
      if (blockedUntil.size > MAX_BLOCKED_ADDRESSES) {
        for (const [other, ends] of blockedUntil) if (ends <= Date.now()) blockedUntil.delete(other);
        if (blockedUntil.size > MAX_BLOCKED_ADDRESSES)
          blockedUntil.delete(blockedUntil.keys().next().value as string);
      }
      refuse(next, blockEnds);
    }
  };

  // Synchronous but for counting a failure: a promise per request costs the hot path (issue 17).
  const middleware = (req: Request, res: Response, next: NextFunction): void | Promise<void> => {
    const key = presentedKey(req);
    const identified = key === undefined ? undefined : keys.identify(key);
    if (identified) {
      res.locals.account = identified.account;
      res.locals.keyId = identified.keyId;
    }
    if (!failures) {
      next();
      return;
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    if (identified) {
      const until = refusedUntil(address, identified);
      if (until === undefined) next();
      else {
        delete res.locals.account;
        delete res.locals.keyId;
        refuse(next, until);
      }
      return;
    }
    const until = blockEnd(address);
    if (until !== undefined) {
      refuse(next, until);
      return;
    }
    return countFailure(address, next);
  };
  return { middleware, passes };
}

import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Identity, KeyStore } from '../auth/key-store.js';
import { ApiError } from '../errors.js';
import type { Next, RequestStep } from './request-step.js';

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
 * It is the first step of every API request (request-pipeline.ts) and identifies the key once
 * for what follows (the rate limits, the routes' authenticate()).
 */

const WINDOW_SECONDS = 60;
/** Pairs of address and key seen authenticating, most recent last; oldest dropped past this. */
const MAX_KNOWN_PAIRS = 10_000;
/** Blocked addresses remembered; past this the expired, then the oldest, are dropped. */
const MAX_BLOCKED_ADDRESSES = 10_000;

/** The addresses that failed to authenticate, the blocked ones, and the keys known from each. */
class FailedAuthentications {
  private readonly failures: RateLimiterMemory;
  /** Address → when its block ends (ms): checked without a promise on every request. */
  private readonly blockedUntil = new Map<string, number>();
  private readonly known = new Set<string>();

  constructor(readonly limit: number) {
    this.failures = new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS });
  }

  /** When the address's block ends, if it is blocked now. */
  blockEnd(address: string): number | undefined {
    const until = this.blockedUntil.get(address);
    if (until === undefined || until > Date.now()) return until;
    this.blockedUntil.delete(address);
    return undefined;
  }

  /** For a key that identified: when the address's block ends if it refuses this key, else undefined. */
  refusedUntil(address: string, identity: Identity): number | undefined {
    const pair = `${address}\u0000${identity.keyId}`;
    const until = this.blockEnd(address);
    if (until !== undefined && !this.known.has(pair)) return until;
    if (!this.known.has(pair)) {
      this.known.add(pair);
      if (this.known.size > MAX_KNOWN_PAIRS) this.known.delete(this.known.values().next().value as string);
    }
    return undefined;
  }

  /** One failure more for the address: when its block ends if this one blocked it. */
  async count(address: string): Promise<number | undefined> {
    try {
      await this.failures.consume(address);
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      const blockEnds = Date.now() + error.msBeforeNext;
      this.blockedUntil.set(address, blockEnds);
      if (this.blockedUntil.size > MAX_BLOCKED_ADDRESSES) {
        const now = Date.now();
        for (const [other, ends] of this.blockedUntil) if (ends <= now) this.blockedUntil.delete(other);
        if (this.blockedUntil.size > MAX_BLOCKED_ADDRESSES)
          this.blockedUntil.delete(this.blockedUntil.keys().next().value as string);
      }
      return blockEnds;
    }
  }

  refuse(next: Next, until: number): void {
    const seconds = String(Math.max(1, Math.ceil((until - Date.now()) / 1000)));
    next(
      new ApiError(
        'rate_limited',
        `too many failed authentications from this address: at most ${this.limit} per minute; retry in ${seconds} s`,
        { 'Retry-After': seconds },
      ),
    );
  }
}

const NAME = 'failed-authentication limit';

export function authFailureLimit(limit: number | undefined, keys: KeyStore): RequestStep {
  const identify = (key: string | undefined) => (key === undefined ? undefined : keys.identify(key));
  if (limit === undefined) {
    return {
      name: NAME,
      run(exchange, next) {
        exchange.identity = identify(exchange.key);
        next();
      },
    };
  }
  const failed = new FailedAuthentications(limit);
  return {
    name: NAME,
    // Synchronous but for counting a failure: a promise per request costs the hot path (issue 17).
    run(exchange, next) {
      const identity = identify(exchange.key);
      const address = exchange.req.socket.remoteAddress ?? 'unknown';
      const until = identity ? failed.refusedUntil(address, identity) : failed.blockEnd(address);
      if (until !== undefined) {
        failed.refuse(next, until);
        return;
      }
      if (identity) {
        exchange.identity = identity;
        next();
        return;
      }
      // The route answers 401, unless this failure was one too many.
      return failed.count(address).then((blocked) => {
        if (blocked === undefined) next();
        else failed.refuse(next, blocked);
      });
    },
  };
}

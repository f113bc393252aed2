import type { NextFunction, Request, Response } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Account } from '../auth/account.js';
import type { Identity } from '../auth/key-store.js';
import type { Plan, RateLimit } from '../config/config.js';
import { ApiError } from '../errors.js';

/**
 * Requests per minute per API key (RATE_LIMITS, DESIGN §2–3), in two buckets per key:
 * writes (every method that changes something: upload, create, insert, clear, delete,
 * execute, cancel are all POST or DELETE) and reads (the rest). A burst of inserts thus
 * never locks a key out of reading its results, and the other way round.
 *
 * It runs once, in front of every API route, so routes added later are limited too, after
 * authFailureLimit, which identified the key. Requests without a valid key pass through
 * untouched: the route answers them 401. Buckets are keyed by the account's handle and a
 * hash of the key, never the key itself, and live in this process's memory (one process
 * serves the API, DESIGN §9).
 */

const WINDOW_SECONDS = 60;
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

type Bucket = 'read' | 'write';

export interface RateLimits {
  /** The middleware in front of every API route. */
  middleware: (req: Request, res: Response, next: NextFunction) => void | Promise<void>;
  /**
   * Counts a request of a key that identified: resolves to the X-RateLimit headers of its
   * answer, or rejects with the 429 past the limit. Undefined when the limits are off.
   */
  count(identity: Identity, method: string): Promise<Record<string, string>> | undefined;
}

const noLimit = (_req: Request, _res: Response, next: NextFunction) => next();

export function rateLimit(limits: Record<Plan, RateLimit> | undefined): RateLimits {
  if (!limits) return { middleware: noLimit, count: () => undefined };
  const perMinute = (plan: Plan, bucket: Bucket) =>
    bucket === 'read' ? limits[plan].readsPerMinute : limits[plan].writesPerMinute;
  const limiters = new Map<string, RateLimiterMemory>();
  for (const plan of ['free', 'premium'] as const) {
    for (const bucket of ['read', 'write'] as const) {
      limiters.set(
        `${plan}:${bucket}`,
        new RateLimiterMemory({
          keyPrefix: bucket,
          points: perMinute(plan, bucket),
          duration: WINDOW_SECONDS,
        }),
      );
    }
  }

  const count = async ({ account, keyId }: Identity, method: string): Promise<Record<string, string>> => {
    const bucket: Bucket = READ_METHODS.has(method) ? 'read' : 'write';
    const limit = perMinute(account.plan, bucket);
    const limiter = limiters.get(`${account.plan}:${bucket}`) as RateLimiterMemory;
    let outcome: RateLimiterRes;
    let allowed: boolean;
    try {
      outcome = await limiter.consume(`${account.handle}:${keyId}`);
      allowed = true;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      outcome = error;
      allowed = false;
    }
    const resetSeconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
    const headers = {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(Math.max(0, outcome.remainingPoints)),
      'X-RateLimit-Reset': String(resetSeconds),
    };
    if (allowed) return headers;
    throw new ApiError(
      'rate_limited',
      `rate limit exceeded: this key may make ${limit} ${bucket} requests per minute on the ${account.plan} plan; retry in ${resetSeconds} s`,
      { ...headers, 'Retry-After': String(resetSeconds) },
    );
  };

  const middleware = (req: Request, res: Response, next: NextFunction): void | Promise<void> => {
    const account = res.locals.account as Account | undefined;
    const keyId = res.locals.keyId as string | undefined;
    if (!account || keyId === undefined) {
      next();
      return;
    }
    return count({ account, keyId }, req.method).then((headers) => {
      res.set(headers);
      next();
    }, next);
  };
  return { middleware, count };
}

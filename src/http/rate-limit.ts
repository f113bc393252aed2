import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Identity } from '../auth/key-store.js';
import type { Plan, RateLimit } from '../config/config.js';
import { ApiError } from '../errors.js';
import type { RequestStep } from './request-step.js';

/**
 * Requests per minute per API key (RATE_LIMITS, DESIGN §2–3), in two buckets per key:
 * writes (every method that changes something: upload, create, insert, clear, delete,
 * execute, cancel are all POST or DELETE) and reads (the rest). A burst of inserts thus
 * never locks a key out of reading its results, and the other way round.
 *
 * It is a step of every API request (request-pipeline.ts), so routes added later are limited
 * too, after authFailureLimit, which identified the key. Requests without a valid key pass through
 * untouched: the route answers them 401. Buckets are keyed by the account's handle and a
 * hash of the key, never the key itself, and live in this process's memory (one process
 * serves the API, DESIGN §9).
 */

const WINDOW_SECONDS = 60;
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

type Bucket = 'read' | 'write';

const NAME = 'rate limit';

export function rateLimit(limits: Record<Plan, RateLimit> | undefined): RequestStep {
  if (!limits) return { name: NAME, run: (_exchange, next) => next() };
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

  /** Counts a request: the X-RateLimit headers of its answer, or the 429 past the limit. */
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

  return {
    name: NAME,
    run(exchange, next) {
      const identity = exchange.identity;
      if (!identity) {
        next();
        return;
      }
      const res = exchange.res;
      return count(identity, exchange.req.method ?? 'GET').then((headers) => {
        for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
        next();
      }, next);
    },
  };
}

import type { AppDeps } from './app-deps.js';
import { authFailureLimit } from './auth-failure-limit.js';
import { authenticateStep } from './authenticate.js';
import { rateLimit } from './rate-limit.js';
import { observeRequests } from './request-observer.js';
import type { RequestStep } from './request-step.js';

/**
 * The request pipeline, declared once. A request comes in by one of two doors: express
 * (app.ts), or the fast lane in front of it (fast-lane.ts), which answers the GETs of the
 * routes that declare themselves lane-eligible (lane-routes.ts) without express's cost.
 * Both run these steps, in this order, from the same objects:
 *
 *   observe → failed-authentication limit → rate limit → (steps added by tests)
 *     → the route is found → authenticate → the route answers; any error → sendError
 *
 * Express mounts the steps (express-door.ts): `observe` on every request, the rest in front of
 * the API's routes, and `authenticate` as each API route's first handler, since express has no
 * place between finding a route and running it; its routes' /metrics labels come from their
 * mount (`mountLabel`), the lane's from its own routes. The lane runs the same list, then
 * `authenticate`, then its route (LaneExchange). A step added here reaches both doors.
 */
export interface RequestPipeline {
  /** Before the route is looked for, in order. */
  steps: readonly RequestStep[];
  /** Once a route is found, before it answers. */
  authenticate: RequestStep;
}

export function requestPipeline(deps: AppDeps): RequestPipeline {
  const { config, keys, logger, metrics } = deps;
  return {
    steps: [
      observeRequests(logger, metrics),
      // Identifies the key once for the rate limits and authenticate.
      authFailureLimit(config.authFailureLimit, keys),
      rateLimit(config.rateLimits),
      ...(deps.requestSteps ?? []),
    ],
    authenticate: authenticateStep(keys),
  };
}

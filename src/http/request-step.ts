import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Identity } from '../auth/key-store.js';

/**
 * A step of the request pipeline (request-pipeline.ts), written once for both doors: express
 * mounts it as a middleware (express-door.ts), the fast lane runs it itself (fast-lane.ts),
 * both in the list's order, as express runs middlewares. A step sees a request as an
 * `Exchange`, never as express's request, so it runs alike in both.
 */

/** What a request turned out to be, asked once it is over (the request log, /metrics). */
export interface Outcome {
  /** The route pattern that answered it (`/v1/restaking/avs-stats`), or `unmatched`. */
  route: string;
  /** The path it was answered on, without the query string. */
  path: string;
  /** The account whose key it carried, if one identified. */
  handle: string | undefined;
  /** Body bytes a table route stored, for the upload metrics. */
  stored?: number | undefined;
}

/** One request as the steps see it, whichever door it came in by. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The API key the request presents, if any (express also reads `api_key`; the lane takes only headers'). */
  readonly key: string | undefined;
  /** Who the key belongs to, once a step identified it (the failed-authentication limit, authenticate). */
  identity: Identity | undefined;
  /** What the request turned out to be: each door knows which of its routes answered. */
  outcome(): Outcome;
}

/** Goes on to the next step; with an error, the request is answered with it instead. */
export type Next = (error?: unknown) => void;

export interface RequestStep {
  /** Says what the step is for, in errors and tests. */
  readonly name: string;
  /**
   * Whether it runs on every request (/health, /metrics and the pages too), not only on the
   * API's: such a step comes first in the list.
   */
  readonly everyRequest?: boolean;
  /**
   * Calls `next()` to go on, or `next(error)`; may return a promise, whose rejection is the
   * request's error. Synchronous where it can be: a promise per request costs the hot path
   * (issue 17).
   */
  run(exchange: Exchange, next: Next): void | Promise<void>;
}

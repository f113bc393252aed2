import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { declaredBytes, loggedPath, requestLogger } from './request-log.js';
import { recordRequest, routeLabel, storedBytes } from './request-metrics.js';

/**
 * What every request leaves behind once it is over: its count and duration in /metrics, and
 * its log line when it was answered (info lines on). One listener per request does both:
 * listeners, closures and clock reads are a measurable part of a small cached page's cost
 * (issue 17).
 */

/** What a request turned out to be, asked once it is over. */
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

export type Observe = (req: IncomingMessage, res: ServerResponse, outcome: () => Outcome) => void;

export function requestObserver(logger: Logger, metrics: ServiceMetrics): Observe {
  const log = requestLogger(logger);
  return (req, res, outcome) => {
    const started = performance.now();
    res.once('close', () => {
      const ms = performance.now() - started;
      // A connection closed before the answer ended has no status the client saw.
      const finished = res.writableFinished;
      const { route, path, handle, stored } = outcome();
      const method = req.method ?? 'other';
      recordRequest(metrics, method, route, finished ? String(res.statusCode) : 'aborted', ms / 1000, stored);
      if (log && finished) {
        log({ method, path, status: res.statusCode, ms, handle, bytesIn: declaredBytes(req) });
      }
    });
  };
}

/** The observer in front of express's routes. */
export function observeRequests(observe: Observe) {
  return (req: Request, res: Response, next: NextFunction): void => {
    observe(req, res, () => ({
      route: routeLabel(req, res),
      path: loggedPath(req),
      handle: (res.locals.account as { handle: string } | undefined)?.handle,
      stored: storedBytes(res),
    }));
    next();
  };
}

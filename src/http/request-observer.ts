import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { declaredBytes, requestLogger } from './request-log.js';
import { recordRequest } from './request-metrics.js';
import type { RequestStep } from './request-step.js';

/**
 * What every request leaves behind once it is over: its count and duration in /metrics, and
 * its log line when it was answered (info lines on). One listener per request does both:
 * listeners, closures and clock reads are a measurable part of a small cached page's cost
 * (issue 17). The first step of every request, in both doors (request-pipeline.ts).
 */
export function observeRequests(logger: Logger, metrics: ServiceMetrics): RequestStep {
  const log = requestLogger(logger);
  return {
    name: 'observe',
    everyRequest: true,
    run(exchange, next) {
      const { req, res } = exchange;
      const started = performance.now();
      res.once('close', () => {
        const ms = performance.now() - started;
        // A connection closed before the answer ended has no status the client saw.
        const finished = res.writableFinished;
        const { route, path, handle, stored } = exchange.outcome();
        const method = req.method ?? 'other';
        recordRequest(
          metrics,
          method,
          route,
          finished ? String(res.statusCode) : 'aborted',
          ms / 1000,
          stored,
        );
        if (log && finished) {
          log({ method, path, status: res.statusCode, ms, handle, bytesIn: declaredBytes(req) });
        }
      });
      next();
    },
  };
}

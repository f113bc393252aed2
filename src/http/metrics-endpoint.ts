import type { Request, Response } from 'express';
import type { ServiceMetrics } from '../metrics/service-metrics.js';

/**
 * GET /metrics in Prometheus' text format. Unauthenticated like /health, for scrapers:
 * it holds counts, durations and sizes only, labelled by route pattern, method, status,
 * operation and saved-query id; no key, account, table name, URL or parameter value.
 */
export function metricsEndpoint(metrics: ServiceMetrics) {
  return async (_req: Request, res: Response): Promise<void> => {
    const text = await metrics.render();
    res.setHeader('Content-Type', metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(text);
  };
}

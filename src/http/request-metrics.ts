import type { NextFunction, Request, Response } from 'express';
import type { ServiceMetrics, UploadOperation } from '../metrics/service-metrics.js';

/**
 * Counts every request and times it, labelled by the route pattern that answered it
 * (`/v1/execution/:executionId/results`), never the URL, so the number of series stays
 * bounded whatever clients send. Requests no route reached (unknown paths, and those
 * refused before routing: rate limits, malformed URLs) share the route `unmatched`.
 */

/** Where the routers are mounted; /api/v1 is the same API as /v1 (the clients' bases). */
const MOUNTS: readonly [prefix: string, label: string][] = [
  ['/api/v1', '/v1'],
  ['/v1', '/v1'],
  ['/settings', '/settings'],
];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const UPLOAD_ROUTES: Record<string, UploadOperation> = {
  '/v1/table/upload/csv': 'upload',
  '/v1/uploads/csv': 'upload',
  '/v1/table/:namespace/:table_name/insert': 'insert',
  '/v1/uploads/:namespace/:table_name/insert': 'insert',
};

/** The body size a table route stored, for the upload metrics (set by the route once stored). */
export function recordStoredBytes(res: Response, bytes: number): void {
  res.locals.storedBodyBytes = bytes;
}

export function routeLabel(req: Request): string {
  // express keeps the last route that matched on the request, also after an error left it.
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern !== 'string') return 'unmatched';
  const path = req.originalUrl.split('?', 1)[0] ?? '';
  for (const [prefix, label] of MOUNTS) {
    if (path === prefix || path.startsWith(`${prefix}/`))
      return pattern === '/' ? label : `${label}${pattern}`;
  }
  return pattern;
}

export function requestMetrics(metrics: ServiceMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('close', () => {
      const seconds = (performance.now() - started) / 1000;
      // A connection closed before the answer ended has no status the client saw.
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      const route = routeLabel(req);
      metrics.request(METHODS.has(req.method) ? req.method : 'other', route, status, seconds);
      const operation = UPLOAD_ROUTES[route];
      if (operation && req.method === 'POST') {
        const stored = res.locals.storedBodyBytes;
        metrics.upload(operation, status, seconds, typeof stored === 'number' ? stored : undefined);
      }
    });
    next();
  };
}

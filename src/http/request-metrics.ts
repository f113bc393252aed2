import type { NextFunction, Request, Response } from 'express';
import type { ServiceMetrics, UploadOperation } from '../metrics/service-metrics.js';

/**
 * Counts every request and times it, labelled by the route pattern that answered it
 * (`/v1/execution/:executionId/results`), never the URL, so the number of series stays
 * bounded whatever clients send. Requests no route reached (unknown paths, and those
 * refused before routing: rate limits, malformed URLs) share the route `unmatched`.
 */

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

/**
 * Marks the requests that entered a mounted router with the label of its mount, so that the
 * label comes from what matched and not from the URL's spelling (mount paths match in any
 * case: `GET /V1/tables` is `/v1/tables`). /api/v1 is the same API as /v1 (the clients' bases).
 */
export function mountLabel(label: string) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.locals.mountLabel = label;
    next();
  };
}

function routeLabel(req: Request, res: Response): string {
  // express keeps the last route that matched on the request, also after an error left it.
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern !== 'string') return 'unmatched';
  const mount = res.locals.mountLabel;
  if (typeof mount !== 'string') return pattern;
  return pattern === '/' ? mount : `${mount}${pattern}`;
}

export function requestMetrics(metrics: ServiceMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('close', () => {
      const seconds = (performance.now() - started) / 1000;
      // A connection closed before the answer ended has no status the client saw.
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      const route = routeLabel(req, res);
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

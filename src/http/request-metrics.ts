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
  '/v1/table/:namespace/:table_name/upsert': 'upsert',
  '/v1/uploads/:namespace/:table_name/upsert': 'upsert',
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

/** The route pattern an express request was answered by, or `unmatched`. */
export function routeLabel(req: Request, res: Response): string {
  // express keeps the last route that matched on the request, also after an error left it.
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern !== 'string') return 'unmatched';
  const mount = res.locals.mountLabel;
  if (typeof mount !== 'string') return pattern;
  return pattern === '/' ? mount : `${mount}${pattern}`;
}

/** The stored body size a table route recorded (recordStoredBytes), if any. */
export function storedBytes(res: Response): number | undefined {
  const stored = res.locals.storedBodyBytes;
  return typeof stored === 'number' ? stored : undefined;
}

/** Counts and times one finished request; `status` is `aborted` when the client never saw one. */
export function recordRequest(
  metrics: ServiceMetrics,
  method: string,
  route: string,
  status: string,
  seconds: number,
  stored: number | undefined,
): void {
  metrics.request(METHODS.has(method) ? method : 'other', route, status, seconds);
  const operation = UPLOAD_ROUTES[route];
  if (operation && method === 'POST') metrics.upload(operation, status, seconds, stored);
}

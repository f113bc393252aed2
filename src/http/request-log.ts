import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log.js';

/**
 * One log line per request. Only the path is logged, never the query string (it may
 * carry `api_key`) nor any header.
 */
export function requestLog(logger: Logger) {
  if (!logger.isLevelEnabled('info')) return (_req: Request, _res: Response, next: NextFunction) => next();
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const account = res.locals.account as { handle: string } | undefined;
      logger.info(
        {
          method: req.method,
          path: req.path === '/' ? req.originalUrl.split('?')[0] : `${req.baseUrl}${req.path}`,
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          handle: account?.handle,
          bytesIn: Number(req.headers['content-length'] ?? 0) || undefined,
        },
        'request',
      );
    });
    next();
  };
}

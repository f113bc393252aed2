import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import type { Logger } from '../log.js';

/**
 * One log line per answered request. Only the path is logged, never the query string (it
 * may carry `api_key`) nor any header.
 */

export interface RequestLine {
  method: string;
  path: string;
  status: number;
  ms: number;
  handle: string | undefined;
  bytesIn: number | undefined;
}

/** The function that writes a request's line, or undefined when info lines are off. */
export function requestLogger(logger: Logger): ((line: RequestLine) => void) | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  return (line) => logger.info(line, 'request');
}

/** The path an express request was answered on, without its query string. */
export function loggedPath(req: Request): string {
  return req.path === '/' ? req.originalUrl.split('?')[0] : `${req.baseUrl}${req.path}`;
}

/** The body size the client declared, if any. */
export function declaredBytes(req: IncomingMessage): number | undefined {
  return Number(req.headers['content-length'] ?? 0) || undefined;
}

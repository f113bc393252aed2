import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors.js';
import type { Logger } from '../log.js';
import { DatabaseClosingError } from '../storage/database.js';
import { isDiskFull } from '../storage/storage-error.js';
import { ClientGoneError } from '../tables/body-to-file.js';
import { waitsInVain } from './expect-continue.js';

/**
 * After an answer sent before the request body was read, the rest of the body is read and
 * dropped, so that a client still sending reads the answer instead of a reset, for at most
 * this long and this much, and no longer than the client stays silent.
 */
const DRAIN_LIMIT_MS = 10_000;
const DRAIN_IDLE_MS = 1_000;
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
/** What express's res.json sends. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** Errors thrown by express's own parsers (raw-body) carry `type` and `status`. */
interface HttpLibraryError {
  type?: string;
  status?: number;
  expose?: boolean;
  message: string;
}

function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const library = error as HttpLibraryError;
  if (isDiskFull(error)) {
    return new ApiError(
      'insufficient_storage',
      'the server has no disk space left: nothing of this request was stored; retry once space is freed',
    );
  }
  // A request still running when shutdown interrupted its statement.
  if (error instanceof DatabaseClosingError)
    return new ApiError('unavailable', 'the service is shutting down; retry in a moment');
  // The router decoding a path segment with a broken %-escape (`/v1/query/%FF/results`).
  if (error instanceof URIError && library.status === 400)
    return new ApiError('bad_request', 'the path holds a malformed percent-encoding (%XX)');
  if (
    typeof library?.status === 'number' &&
    library.expose &&
    library.status >= 400 &&
    library.status < 500
  ) {
    if (library.type === 'entity.too.large')
      return new ApiError('payload_too_large', 'the request body is too large');
    if (library.type === 'entity.parse.failed') return new ApiError('bad_request', 'malformed JSON body');
    return new ApiError('bad_request', library.message);
  }
  return undefined;
}

export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: { error: string };
}

/**
 * What an error is answered with: `{"error": "..."}` with the error's status. Anything that
 * is not an ApiError is a bug: logged with its stack, answered as a bare 500.
 */
export function errorAnswer(error: unknown, logger: Logger, method: string, path: string): ErrorAnswer {
  const apiError = toApiError(error);
  if (!apiError) logger.error({ err: error, method, path }, 'unhandled error');
  // The operator has to act on this one: say so in the log, not only to the client.
  if (apiError?.code === 'insufficient_storage') logger.error({ err: error, method, path }, 'disk full');
  return {
    status: apiError?.status ?? 500,
    headers: apiError?.headers ?? {},
    body: { error: apiError?.message ?? 'internal server error' },
  };
}

/**
 * Answers a request with an error, in either door: the error's JSON, framed by its length,
 * after any headers steps set (the rate limits'). A body not read to its end is drained first.
 */
export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  error: unknown,
  logger: Logger,
  path: string,
): void {
  if (error instanceof ClientGoneError) {
    req.socket.destroy();
    return;
  }
  const { status, headers, body } = errorAnswer(error, logger, req.method ?? 'other', path);
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (req.complete || req.readableEnded) {
    const payload = Buffer.from(JSON.stringify(body));
    res.setHeader('Content-Type', JSON_TYPE);
    res.setHeader('Content-Length', payload.length);
    res.end(payload);
    return;
  }
  answerThenClose(req, res, body);
}

/** The one place express's errors become responses (the fast lane's too: sendError). */
export function errorHandler(logger: Logger) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void =>
    sendError(req, res, error, logger, req.path);
}

/**
 * The body was not read to its end (a 413 decided from Content-Length, or an error found
 * early). The whole answer goes out at once, framed by its length, so a client can read it
 * while it still sends, or while it waits (for a `100 Continue`, or stalled). Closing the
 * connection now would make the kernel answer a client still sending with a reset that can
 * destroy the answer before it is read; so the rest of the body is read and dropped first,
 * until it ends, the client falls silent or the limits above are reached, and then the
 * connection is closed.
 */
function answerThenClose(req: IncomingMessage, res: ServerResponse, body: { error: string }): void {
  const payload = Buffer.from(JSON.stringify(body));
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', payload.length);
  res.setHeader('Connection', 'close');
  // A client denied its `100 Continue` sends nothing more: close at once.
  if (waitsInVain(req)) {
    res.end(payload);
    return;
  }
  res.write(payload);
  let drained = 0;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(limit);
    clearTimeout(idle);
    req.off('data', count);
    res.once('finish', () => {
      if (!req.readableEnded) req.socket.destroy();
    });
    // Node closes a `Connection: close` connection once its answer ends.
    res.end();
  };
  const count = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) close();
    else idle.refresh();
  };
  const limit = setTimeout(close, DRAIN_LIMIT_MS);
  const idle = setTimeout(close, DRAIN_IDLE_MS);
  limit.unref();
  idle.unref();
  req.on('data', count);
  req.once('end', close);
  req.once('error', close);
  req.once('close', close);
  req.resume();
}

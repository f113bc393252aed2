import type { Request } from 'express';
import { ApiError } from '../errors.js';

/**
 * Refuses a body whose Content-Length already says it is over `limit` bytes, before a byte
 * of it is read: the answer goes out at once. (express.json reads a refused body to its end
 * before it answers, which never comes for a client that sends nothing.)
 */
export function refuseDeclaredOver(req: Request, limit: number): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    throw new ApiError('payload_too_large', `the request body is too large: at most ${limit} bytes here`);
}

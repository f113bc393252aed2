import type { Request } from 'express';
import getRawBody from 'raw-body';
import { badRequest } from '../errors.js';
import { refuseDeclaredOver } from './declared-length.js';

/**
 * A small JSON request body, read whole (at most `limit` bytes: a 413 past it, at once when
 * Content-Length says so) and parsed;
 * undefined when there is none. The body is read as JSON whatever its Content-Type: the
 * official clients send `application/json`, while curl's `-d` says form data.
 */
export async function readJsonBody(req: Request, limit: number): Promise<unknown> {
  refuseDeclaredOver(req, limit);
  const raw = await getRawBody(req, { limit, encoding: 'utf8' });
  if (raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw badRequest('malformed JSON body');
  }
}

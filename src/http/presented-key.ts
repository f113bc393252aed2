import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Request } from 'express';

/**
 * The key comes in header X-Service-Api-Key, its alias X-Dune-Api-Key (what the official
 * clients send), or query parameter api_key. A missing or unknown key is the same 401.
 */
export function presentedKey(req: Request): string | undefined {
  const header = headerKey(req.headers);
  if (header !== undefined) return header;
  const query = req.query.api_key;
  return typeof query === 'string' ? query : undefined;
}

/** The key of the headers alone (the fast lane leaves `api_key` to express). */
export function headerKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-service-api-key'] ?? headers['x-dune-api-key'];
  return typeof header === 'string' ? header : undefined;
}

/** Where a request's key came from, for the 401 that names where to send one. */
export function keySource(req: IncomingMessage): string {
  if (req.headers['x-service-api-key'] !== undefined) return 'the X-Service-Api-Key header';
  if (req.headers['x-dune-api-key'] !== undefined) return 'the X-Dune-Api-Key header';
  return 'the api_key query parameter';
}

import type { Request } from 'express';
import { ApiError } from '../errors.js';
import type { InsertFormat } from '../tables/insert-plan.js';

/** A JSON body, or none at all (clients that send `{}` without a header included). */
export function requireJson(req: Request): void {
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/json\b/i.test(type)) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type must be application/json, got ${JSON.stringify(type)}`,
    );
  }
}

const INSERT_TYPES: Record<string, InsertFormat> = {
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
};

/** An insert body's format from its Content-Type; only UTF-8 text is read. */
export function insertFormat(header: string | undefined): InsertFormat {
  const [type = '', ...parameters] = (header ?? '').split(';').map((part) => part.trim().toLowerCase());
  const format = INSERT_TYPES[type];
  const charset = parameters.find((p) => p.startsWith('charset='))?.slice('charset='.length);
  if (!format || (charset !== undefined && charset.replaceAll('"', '') !== 'utf-8')) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type must be text/csv or application/x-ndjson (UTF-8), got ${header === undefined ? 'none' : JSON.stringify(header)}`,
    );
  }
  return format;
}

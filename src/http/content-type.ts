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

/** The media type of a Content-Type header in lower case, and its charset when it names one. */
function mediaType(header: string | undefined): { type: string; charset: string | undefined } {
  const [type = '', ...parameters] = (header ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters.find((p) => p.startsWith('charset='))?.slice('charset='.length);
  return { type, charset: charset?.replaceAll('"', '') };
}

const PARQUET = 'application/vnd.apache.parquet';

const INSERT_TYPES: Record<string, InsertFormat> = {
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
  [PARQUET]: 'parquet',
};

/** An insert (or upsert) body's format from its Content-Type; text is read as UTF-8 only. */
export function insertFormat(header: string | undefined): InsertFormat {
  const { type, charset } = mediaType(header);
  const format = INSERT_TYPES[type];
  if (!format || (charset !== undefined && charset !== 'utf-8')) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type must be text/csv or application/x-ndjson (UTF-8), or ${PARQUET}, got ${header === undefined ? 'none' : JSON.stringify(header)}`,
    );
  }
  return format;
}

/** An upload's body: the JSON object of the mirrored API, or a file sent as is. */
export type UploadFormat = 'json' | InsertFormat;

/** An upload body's format from its Content-Type: no header at all is the JSON form. */
export function uploadFormat(header: string | undefined): UploadFormat {
  if (header === undefined || /^application\/json\b/i.test(header)) return 'json';
  try {
    return insertFormat(header);
  } catch {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type must be application/json (the JSON form), text/csv, application/x-ndjson or ${PARQUET}, got ${JSON.stringify(header)}`,
    );
  }
}

import path from 'node:path';
import type { Request, Response } from 'express';
import type { Account } from '../../auth/account.js';
import { badRequest } from '../../errors.js';
import { payloadTooLarge } from '../../tables/body-to-file.js';
import { versionPolicy } from '../../tables/table-versions.js';
import { receiveCsvUpload } from '../../tables/upload-csv.js';
import { receiveNdjsonUpload } from '../../tables/upload-ndjson.js';
import {
  UPLOAD_QUERY_PARAMETERS,
  type UploadOptions,
  uploadOptionsFromQuery,
} from '../../tables/upload-options.js';
import { receiveParquetUpload } from '../../tables/upload-parquet.js';
import { checkPrivacy, discardUpload, type ReceivedUpload, storeUpload } from '../../tables/upload-store.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf } from '../authenticate.js';
import { type UploadFormat, uploadFormat } from '../content-type.js';
import { readQueryParams } from '../query-params.js';
import { recordStoredBytes } from '../request-metrics.js';
import { uploadAnswer } from './upload-answer.js';

/**
 * POST /v1/table/upload/csv (spec §4.1, issue 24): the mirrored API's JSON form, or the file
 * itself (text/csv, NDJSON, Parquet) with the JSON form's fields as query parameters.
 */

type Received = ReceivedUpload & { options: UploadOptions; dataBytes?: number };

/** The options a file sent as is carries in the query, checked before its body is read. */
function queryOptions(req: Request, format: UploadFormat, account: Account): UploadOptions | undefined {
  // The JSON form carries its options in the body, and takes no query parameter.
  const params = readQueryParams(req, format === 'json' ? [] : UPLOAD_QUERY_PARAMETERS);
  if (format === 'json') return undefined;
  const options = uploadOptionsFromQuery(params);
  checkPrivacy(account, options);
  if (format === 'parquet' && options.types.size > 0) {
    throw badRequest('"types" does not apply to Parquet: its schema gives every column\'s type');
  }
  return options;
}

export function uploadHandler(deps: AppDeps) {
  const tmpDir = path.join(deps.config.dataDir, 'tmp');
  const maxBytes = deps.config.maxUploadBytes;
  const { database } = deps;

  /** The upload's body, received into a staging table: as JSON, CSV, NDJSON or Parquet. */
  const receive = async (
    req: Request,
    format: UploadFormat,
    handle: string,
    options: UploadOptions | undefined,
  ): Promise<Received> => {
    if (format === 'json' || format === 'csv')
      return receiveCsvUpload(req, tmpDir, maxBytes, database, handle, options);
    const given = options as UploadOptions;
    const received =
      format === 'ndjson'
        ? await receiveNdjsonUpload(req, tmpDir, maxBytes, database, handle, given)
        : await receiveParquetUpload(req, tmpDir, maxBytes, database, handle);
    return { ...received, options: given };
  };

  return async (req: Request, res: Response) => {
    const account = accountOf(res);
    const format = uploadFormat(req.headers['content-type']);
    const options = queryOptions(req, format, account);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared >= maxBytes) throw payloadTooLarge(maxBytes);
    // A client that leaves before the answer interrupts its load: nobody would learn its outcome.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const started = performance.now();
    const received = await receive(req, format, account.handle, options);
    const receivedAt = performance.now();
    try {
      const policy = versionPolicy(deps.config);
      const stored = await storeUpload(database, account, received, received.options, policy, gone.signal);
      // Where a large upload's time went: reading the body, then DuckDB loading it.
      deps.logger.info(
        {
          table: `${account.handle}.${stored.tableName}`,
          format,
          rows: stored.rowCount,
          bytes: received.bytes,
          receiveMs: Math.round(receivedAt - started),
          // The load runs while the body arrives: this is what remained after it had.
          loadMs: Math.round(performance.now() - receivedAt),
          loadSteps: stored.steps,
          dryRun: received.options.dryRun,
        },
        'upload stored',
      );
      // The data's bytes as sent (a CSV's trailing blank lines included), whatever the form.
      if (!received.options.dryRun) recordStoredBytes(res, received.dataBytes ?? received.bytes);
      res.json(uploadAnswer(stored, received.options, format === 'ndjson' ? 'NDJSON' : 'CSV'));
    } finally {
      await discardUpload(received);
    }
  };
}

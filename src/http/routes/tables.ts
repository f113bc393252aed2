import path from 'node:path';
import type { Request, Response, Router } from 'express';
import { badRequest } from '../../errors.js';
import { payloadTooLarge } from '../../tables/body-to-file.js';
import { listTables } from '../../tables/table-catalog.js';
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
import { accountOf, authenticate } from '../authenticate.js';
import { type UploadFormat, uploadFormat } from '../content-type.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { integerParam, readQueryParams } from '../query-params.js';
import { recordStoredBytes } from '../request-metrics.js';
import { listEntry } from './table-entry.js';
import { tableOperationRoutes } from './table-operations.js';
import { uploadAnswer } from './upload-answer.js';

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 10_000;

export function tableRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const tmpDir = path.join(deps.config.dataDir, 'tmp');
  const maxBytes = deps.config.maxUploadBytes;

  /** The upload's body, received into a staging table: as JSON, CSV, NDJSON or Parquet. */
  const receive = async (
    req: Request,
    format: UploadFormat,
    handle: string,
    options: UploadOptions | undefined,
  ): Promise<ReceivedUpload & { options: UploadOptions; dataBytes?: number }> => {
    const { database } = deps;
    if (format === 'json' || format === 'csv')
      return receiveCsvUpload(req, tmpDir, maxBytes, database, handle, options);
    const given = options as UploadOptions;
    const received =
      format === 'ndjson'
        ? await receiveNdjsonUpload(req, tmpDir, maxBytes, database, handle, given)
        : await receiveParquetUpload(req, tmpDir, maxBytes, database, handle);
    return { ...received, options: given };
  };

  const upload = async (req: Request, res: Response) => {
    const account = accountOf(res);
    const format = uploadFormat(req.headers['content-type']);
    // The JSON form carries its options in the body; a file sent as is, in the query.
    const params = readQueryParams(req, format === 'json' ? [] : UPLOAD_QUERY_PARAMETERS);
    const queryOptions = format === 'json' ? undefined : uploadOptionsFromQuery(params);
    if (queryOptions) checkPrivacy(account, queryOptions);
    if (format === 'parquet' && queryOptions && queryOptions.types.size > 0) {
      throw badRequest('"types" does not apply to Parquet: its schema gives every column\'s type');
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared >= maxBytes) throw payloadTooLarge(maxBytes);
    // A client that leaves before the answer interrupts its load: nobody would learn its outcome.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const started = performance.now();
    const received = await receive(req, format, account.handle, queryOptions);
    const receivedAt = performance.now();
    try {
      const stored = await storeUpload(
        deps.database,
        account,
        received,
        received.options,
        versionPolicy(deps.config),
        gone.signal,
      );
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

  const list = async (req: Request, res: Response) => {
    const params = readQueryParams(req, ['limit', 'offset']);
    const limit =
      integerParam('limit', params.get('limit'), { min: 1, max: MAX_LIST_LIMIT }) ?? DEFAULT_LIST_LIMIT;
    const offset = integerParam('offset', params.get('offset'), { min: 0 }) ?? 0;
    const { tables, total } = await deps.database.read((session) =>
      listTables(session, accountOf(res), limit, offset),
    );
    const next = offset + tables.length;
    res.json({ tables: tables.map(listEntry), ...(next < total ? { next_offset: next } : {}) });
  };

  for (const path of ['/table/upload/csv', '/uploads/csv']) {
    router.route(path).post(auth, upload).all(methodNotAllowed('POST'));
  }
  router.route('/tables').get(auth, list).all(methodNotAllowed('GET'));
  // POST /uploads (create) and the 405 for other methods come with the table operations.
  router.route('/uploads').get(auth, list);
  tableOperationRoutes(router, deps);
}

import path from 'node:path';
import type { Request, Response, Router } from 'express';
import { payloadTooLarge } from '../../tables/body-to-file.js';
import { listTables } from '../../tables/table-catalog.js';
import { discardUpload, receiveUpload, storeUpload } from '../../tables/upload-csv.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { requireJson } from '../content-type.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { integerParam, readQueryParams } from '../query-params.js';
import { recordStoredBytes } from '../request-metrics.js';
import { listEntry } from './table-entry.js';
import { tableOperationRoutes } from './table-operations.js';

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 10_000;

export function tableRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const tmpDir = path.join(deps.config.dataDir, 'tmp');
  const maxBytes = deps.config.maxUploadBytes;

  const upload = async (req: Request, res: Response) => {
    const account = accountOf(res);
    readQueryParams(req, []);
    requireJson(req);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared >= maxBytes) throw payloadTooLarge(maxBytes);
    // A client that leaves before the answer interrupts its load: nobody would learn its outcome.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const started = performance.now();
    const received = await receiveUpload(req, tmpDir, maxBytes, deps.database, account.handle);
    const receivedAt = performance.now();
    try {
      const stored = await storeUpload(deps.database, account, received, gone.signal);
      // Where a large upload's time went: reading the body, then DuckDB loading it.
      deps.logger.info(
        {
          table: `${account.handle}.${stored.tableName}`,
          rows: stored.rowCount,
          csvBytes: received.dataBytes,
          receiveMs: Math.round(receivedAt - started),
          // The load runs while the body arrives: this is what remained after it had.
          loadMs: Math.round(performance.now() - receivedAt),
          loadSteps: stored.steps,
        },
        'upload stored',
      );
      recordStoredBytes(res, received.dataBytes);
      res.json({ success: true, table_name: stored.tableName });
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

import path from 'node:path';
import type { Request, RequestHandler, Response, Router } from 'express';
import { discard } from '../../tables/body-to-file.js';
import { deleteRows, readDeleteRowsRequest } from '../../tables/delete-rows.js';
import { writableTable } from '../../tables/insert-rows.js';
import { receiveBody } from '../../tables/receive-body.js';
import { fullName } from '../../tables/table-access.js';
import { listVersions, readRestoreRequest, restoreTable } from '../../tables/table-history.js';
import { type VersionPolicy, versionPolicy } from '../../tables/table-versions.js';
import { upsertRows } from '../../tables/upsert-rows.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';
import { recordStoredBytes } from '../request-metrics.js';
import { pathRef, rowsBodyFormat, writeTarget } from './table-write.js';

/**
 * Changing rows and undoing changes (issue 24), under /table and /uploads like the other table
 * operations: upsert, delete-rows, versions, restore. `json` reads a small JSON body (the
 * create operation's checks and parser).
 */
type Handler = (req: Request, res: Response) => Promise<void>;

function upsertHandler(deps: AppDeps, policy: VersionPolicy): Handler {
  const tmpDir = path.join(deps.config.dataDir, 'tmp');
  const maxBytes = deps.config.maxUploadBytes;
  return async (req, res) => {
    const params = readQueryParams(req, ['key']);
    const { account, ref } = writeTarget(deps, req, res);
    const format = rowsBodyFormat(req, maxBytes);
    // Refused before a large body is read: the table is missing, hidden, or an upload.
    await deps.database.read((session) => writableTable(session, account, ref, 'upserts write'));
    const received = await receiveBody(req, tmpDir, maxBytes, format);
    try {
      const key = params.get('key');
      const outcome = await upsertRows(deps.database, account, ref, format, received, key, policy);
      recordStoredBytes(res, received.bytes);
      res.json({
        rows_written: outcome.rowsWritten,
        rows_replaced: outcome.rowsReplaced,
        bytes_written: received.bytes,
        name: fullName(ref),
      });
    } finally {
      await discard(received.file);
    }
  };
}

function deleteRowsHandler(deps: AppDeps, policy: VersionPolicy): Handler {
  return async (req, res) => {
    readQueryParams(req, []);
    const { account, ref } = writeTarget(deps, req, res);
    const filters = readDeleteRowsRequest(req.body);
    const outcome = await deleteRows(deps.database, account, ref, filters, policy);
    res.json({ rows_deleted: outcome.rowsDeleted });
  };
}

function versionsHandler(deps: AppDeps, policy: VersionPolicy): Handler {
  return async (req, res) => {
    readQueryParams(req, []);
    const ref = pathRef(req);
    const entries = await listVersions(deps.database, accountOf(res), ref, policy);
    res.json({
      name: fullName(ref),
      versions: entries.map((entry) => ({
        version: entry.version,
        current: entry.current,
        operation: entry.operation,
        created_at: entry.createdAt.toISOString(),
        row_count: entry.rowCount,
        bytes: entry.bytes,
        ...(entry.expiresAt ? { expires_at: entry.expiresAt.toISOString() } : {}),
      })),
      kept: { writes: policy.kept, hours: policy.hours },
    });
  };
}

function restoreHandler(deps: AppDeps, policy: VersionPolicy): Handler {
  return async (req, res) => {
    readQueryParams(req, []);
    const { account, ref } = writeTarget(deps, req, res);
    const version = readRestoreRequest(req.body);
    const outcome = await restoreTable(deps.database, account, ref, version, policy);
    res.json({
      name: fullName(ref),
      version: outcome.version,
      restored_from: outcome.restoredFrom,
      row_count: outcome.rowCount,
      message: `Table ${fullName(ref)} is back at version ${outcome.version}`,
    });
  };
}

export function tableChangeRoutes(router: Router, deps: AppDeps, options: { json: RequestHandler[] }): void {
  const auth = authenticate(deps.keys);
  const policy = versionPolicy(deps.config);
  const { json } = options;
  for (const base of ['/table', '/uploads']) {
    const at = (operation: string) => `${base}/:namespace/:table_name/${operation}`;
    router.route(at('upsert')).post(auth, upsertHandler(deps, policy)).all(methodNotAllowed('POST'));
    router
      .route(at('delete-rows'))
      .post(auth, ...json, deleteRowsHandler(deps, policy))
      .all(methodNotAllowed('POST'));
    router.route(at('versions')).get(auth, versionsHandler(deps, policy)).all(methodNotAllowed('GET'));
    router
      .route(at('restore'))
      .post(auth, ...json, restoreHandler(deps, policy))
      .all(methodNotAllowed('POST'));
  }
}

import path from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import { discard } from '../../tables/body-to-file.js';
import { clearTable } from '../../tables/clear-table.js';
import { createTable, readCreateRequest } from '../../tables/create-table.js';
import { deleteTable } from '../../tables/delete-table.js';
import { checkInsertTarget, insertRows } from '../../tables/insert-rows.js';
import { receiveBody } from '../../tables/receive-body.js';
import { assertCanWrite, canSee, fullName, tableNotFound } from '../../tables/table-access.js';
import { describeTable } from '../../tables/table-catalog.js';
import { type VersionPolicy, versionPolicy } from '../../tables/table-versions.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { requireJson } from '../content-type.js';
import { refuseDeclaredOver } from '../declared-length.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';
import { recordStoredBytes } from '../request-metrics.js';
import { tableChangeRoutes } from './table-changes.js';
import { listEntry } from './table-entry.js';
import { pathRef, rowsBodyFormat, writeTarget } from './table-write.js';

/**
 * Create, insert, clear, delete and describe (DESIGN §4), under /table and /uploads: the
 * official TypeScript client calls the latter, older clients the former. Upsert, delete-rows,
 * versions and restore are in table-changes.ts.
 */

/** A create body is a small JSON object; anything near this is not one. */
const CREATE_BODY_LIMIT = 1_000_000;

/** What the operations read besides the request. */
interface Operations {
  deps: AppDeps;
  tmpDir: string;
  maxBytes: number;
  policy: VersionPolicy;
}

async function create({ deps }: Operations, req: Request, res: Response): Promise<void> {
  const request = readCreateRequest(req.body);
  assertCanWrite(accountOf(res), request.namespace);
  deps.views.assertNotView(request);
  const outcome = await createTable(deps.database, accountOf(res), request);
  const name = fullName(outcome);
  res.status(outcome.alreadyExisted ? 200 : 201).json({
    namespace: outcome.namespace,
    table_name: outcome.tableName,
    full_name: name,
    example_query: `select * from ${name} limit 10`,
    already_existed: outcome.alreadyExisted,
    message: outcome.alreadyExisted
      ? `Table ${name} already exists with this schema; nothing was changed`
      : `Table ${name} created`,
  });
}

async function insert(
  { deps, tmpDir, maxBytes, policy }: Operations,
  req: Request,
  res: Response,
): Promise<void> {
  readQueryParams(req, []);
  const { account, ref } = writeTarget(deps, req, res);
  const format = rowsBodyFormat(req, maxBytes);
  await checkInsertTarget(deps.database, account, ref);
  const received = await receiveBody(req, tmpDir, maxBytes, format);
  try {
    const outcome = await insertRows(deps.database, account, ref, format, received, policy);
    recordStoredBytes(res, received.bytes);
    res.json({ rows_written: outcome.rowsWritten, bytes_written: received.bytes, name: fullName(ref) });
  } finally {
    await discard(received.file);
  }
}

async function clear({ deps, policy }: Operations, req: Request, res: Response): Promise<void> {
  readQueryParams(req, []);
  const { account, ref } = writeTarget(deps, req, res);
  await clearTable(deps.database, account, ref, policy);
  res.json({ message: `Table ${fullName(ref)} successfully cleared` });
}

async function remove({ deps }: Operations, req: Request, res: Response): Promise<void> {
  readQueryParams(req, []);
  const { account, ref } = writeTarget(deps, req, res);
  await deleteTable(deps.database, account, ref);
  res.json({ message: `Table ${fullName(ref)} successfully deleted` });
}

async function describe({ deps }: Operations, req: Request, res: Response): Promise<void> {
  readQueryParams(req, []);
  const ref = pathRef(req);
  const account = accountOf(res);
  const table = await deps.database.read((session) => describeTable(session, ref.namespace, ref.tableName));
  if (!table || !canSee(account, table)) throw tableNotFound(ref);
  res.json(listEntry(table));
}

const createChecks = (req: Request, _res: Response, next: (error?: unknown) => void) => {
  readQueryParams(req, []);
  requireJson(req);
  refuseDeclaredOver(req, CREATE_BODY_LIMIT);
  next();
};

export function tableOperationRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const operations: Operations = {
    deps,
    tmpDir: path.join(deps.config.dataDir, 'tmp'),
    maxBytes: deps.config.maxUploadBytes,
    policy: versionPolicy(deps.config),
  };
  const to =
    (operation: (operations: Operations, req: Request, res: Response) => Promise<void>) =>
    (req: Request, res: Response) =>
      operation(operations, req, res);
  const parseJson = express.json({ limit: CREATE_BODY_LIMIT, strict: true, type: () => true });

  tableChangeRoutes(router, deps, { json: [createChecks, parseJson] });
  router.route('/table/create').post(auth, createChecks, parseJson, to(create)).all(methodNotAllowed('POST'));
  router
    .route('/uploads')
    .post(auth, createChecks, parseJson, to(create))
    .all(methodNotAllowed('GET', 'POST'));
  for (const base of ['/table', '/uploads']) {
    router
      .route(`${base}/:namespace/:table_name`)
      .get(auth, to(describe))
      .delete(auth, to(remove))
      .all(methodNotAllowed('GET', 'DELETE'));
    router
      .route(`${base}/:namespace/:table_name/insert`)
      .post(auth, to(insert))
      .all(methodNotAllowed('POST'));
    router.route(`${base}/:namespace/:table_name/clear`).post(auth, to(clear)).all(methodNotAllowed('POST'));
  }
}

import type { Request, Response } from 'express';
import type { Account } from '../../auth/account.js';
import { payloadTooLarge } from '../../tables/body-to-file.js';
import type { InsertFormat } from '../../tables/insert-plan.js';
import { assertCanWrite, type TableRef, tableRefFromPath } from '../../tables/table-access.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf } from '../authenticate.js';
import { insertFormat } from '../content-type.js';

/**
 * What every route that writes a table checks before anything else, for the table routes
 * (table-operations.ts) and the row changes (table-changes.ts) alike.
 */

/** The table of `/table/{namespace}/{table_name}` (and `/uploads/…`). */
export function pathRef(req: Request): TableRef {
  return tableRefFromPath(req.params.namespace, req.params.table_name);
}

/**
 * The table the path names and the account writing it. Rights first: they depend on the
 * namespace alone and say nothing about the table; then a materialized view's table, which
 * changes only by its refreshes, is refused.
 */
export function writeTarget(deps: AppDeps, req: Request, res: Response): { account: Account; ref: TableRef } {
  const account = accountOf(res);
  const ref = pathRef(req);
  assertCanWrite(account, ref.namespace);
  deps.views.assertNotView(ref);
  return { account, ref };
}

/** The format of a body of rows, refused at once when its declared length reaches `maxBytes`. */
export function rowsBodyFormat(req: Request, maxBytes: number): InsertFormat {
  const format = insertFormat(req.headers['content-type']);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared >= maxBytes) throw payloadTooLarge(maxBytes);
  return format;
}

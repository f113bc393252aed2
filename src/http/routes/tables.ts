import type { Request, Response, Router } from 'express';
import { listTables } from '../../tables/table-catalog.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { integerParam, readQueryParams } from '../query-params.js';
import { listEntry } from './table-entry.js';
import { tableOperationRoutes } from './table-operations.js';
import { uploadHandler } from './upload.js';

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 10_000;

export function tableRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const upload = uploadHandler(deps);

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

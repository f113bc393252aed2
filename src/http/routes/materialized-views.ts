import type { Request, Response, Router } from 'express';
import type { View } from '../../transform/materialized-views.js';
import { parseViewRef, viewFullName } from '../../transform/view-name.js';
import { readRefreshView, readUpsertView } from '../../transform/view-request.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { readJsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { integerParam, readQueryParams } from '../query-params.js';

/** Dune's default and largest page of views. */
const MAX_LIST_LIMIT = 10_000;
const MAX_BODY = 16 * 1024;

/** A view as Dune answers it (`id`, `query_id`, `sql_id`, `is_private`, `table_size_bytes`, …) and its schedule. */
export function viewToApi(view: View): Record<string, unknown> {
  const name = viewFullName(view);
  return {
    id: name,
    name,
    sql_id: name,
    query_id: view.queryId,
    owner: view.namespace,
    is_private: view.isPrivate,
    table_size_bytes: view.sizeBytes ?? 0,
    row_count: view.rowCount ?? 0,
    cron_expression: view.cronExpression ?? null,
    performance: view.performance,
    expires_at: view.expiresAt?.toISOString() ?? null,
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
    last_refreshed_at: view.refreshedAt?.toISOString() ?? null,
    next_refresh_at: view.nextRefreshAt?.toISOString() ?? null,
    last_execution_ids: view.lastExecutionIds,
    last_error: view.lastError ?? null,
  };
}

/** Dune's materialized views: list, upsert, get, delete, refresh. */
export function materializedViewRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { views } = deps;
  const named = (req: Request, res: Response): View => {
    const given = String(req.params.name);
    return views.visible(accountOf(res), parseViewRef(given, accountOf(res).handle), given);
  };

  router
    .route('/materialized-views')
    .get(auth, (req: Request, res: Response) => {
      const params = readQueryParams(req, ['limit', 'offset']);
      const limit =
        integerParam('limit', params.get('limit'), { min: 1, max: MAX_LIST_LIMIT }) ?? MAX_LIST_LIMIT;
      const offset = integerParam('offset', params.get('offset'), { min: 0 }) ?? 0;
      const { views: own, total } = views.listOwn(accountOf(res), limit, offset);
      const next = offset + own.length;
      res.json({
        materialized_views: own.map(viewToApi),
        total,
        ...(own.length > 0 && next < total ? { next_offset: next } : {}),
      });
    })
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const now = new Date(deps.clock.now());
      const request = readUpsertView(await readJsonBody(req, MAX_BODY), now);
      const { view, refresh } = await views.upsert(accountOf(res), request, now);
      res.json({ name: viewFullName(view), execution_id: refresh.execution.id });
    })
    .all(methodNotAllowed('GET', 'POST'));

  router
    .route('/materialized-views/:name')
    .get(auth, (req: Request, res: Response) => {
      readQueryParams(req, []);
      res.json(viewToApi(named(req, res)));
    })
    .delete(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const view = named(req, res);
      await views.remove(accountOf(res), view);
      res.json({ message: `Materialized view ${viewFullName(view)} successfully deleted` });
    })
    .all(methodNotAllowed('GET', 'DELETE'));

  router
    .route('/materialized-views/:name/refresh')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const performance = readRefreshView(await readJsonBody(req, MAX_BODY));
      const view = named(req, res);
      const refresh = await views.refresh(accountOf(res), view, performance);
      res.json({ execution_id: refresh.execution.id, sql_id: viewFullName(view) });
    })
    .all(methodNotAllowed('POST'));
}

import type { Request, Response, Router } from 'express';
import { queryOverviewToApi, queryToApi } from '../../queries/query.js';
import { parseCreateQuery, parseUpdateQuery } from '../../queries/query-request.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { readJsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { integerParam, readQueryParams } from '../query-params.js';
import { parseQueryId } from './results.js';

/** A query body: SQL (64 KiB at most), parameters and a description, with room to spare. */
const MAX_QUERY_BODY = 1024 * 1024;
/** Dune's default page of its query list. */
const DEFAULT_LIST_LIMIT = 20;
const MAX_LIST_LIMIT = 1_000;

/**
 * Users' saved queries (DESIGN §10): create, read, update, archive, privacy, list. Every
 * change answers `{query_id}`, as the mirrored API does; the clients read the query back.
 */
export function queryRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { queries } = deps;
  const idOf = (req: Request) => parseQueryId(String(req.params.queryId), 'query id');

  router
    .route('/query')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const request = parseCreateQuery(await readJsonBody(req, MAX_QUERY_BODY));
      const query = await queries.create(accountOf(res), request);
      res.json({ query_id: query.id });
    })
    .all(methodNotAllowed('POST'));

  router
    .route('/query/:queryId')
    .get(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      res.json(queryToApi(await queries.visible(accountOf(res), idOf(req))));
    })
    .patch(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const id = idOf(req);
      const request = parseUpdateQuery(await readJsonBody(req, MAX_QUERY_BODY));
      const query = await queries.update(accountOf(res), id, request);
      res.json({ query_id: query.id });
    })
    .all(methodNotAllowed('GET', 'PATCH'));

  const change =
    (action: (id: number, res: Response) => Promise<{ id: number }>) =>
    async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const query = await action(idOf(req), res);
      res.json({ query_id: query.id });
    };
  const changes: [string, (id: number, res: Response) => Promise<{ id: number }>][] = [
    ['archive', (id, res) => queries.setArchived(accountOf(res), id, true)],
    ['unarchive', (id, res) => queries.setArchived(accountOf(res), id, false)],
    ['private', (id, res) => queries.setPrivate(accountOf(res), id, true)],
    ['unprivate', (id, res) => queries.setPrivate(accountOf(res), id, false)],
  ];
  for (const [path, action] of changes) {
    router.route(`/query/:queryId/${path}`).post(auth, change(action)).all(methodNotAllowed('POST'));
  }

  router
    .route('/queries')
    .get(auth, async (req: Request, res: Response) => {
      const params = readQueryParams(req, ['limit', 'offset']);
      const limit =
        integerParam('limit', params.get('limit'), { min: 1, max: MAX_LIST_LIMIT }) ?? DEFAULT_LIST_LIMIT;
      const offset = integerParam('offset', params.get('offset'), { min: 0 }) ?? 0;
      const { queries: own, total } = await queries.listOwn(accountOf(res), limit, offset);
      const next = offset + own.length;
      res.json({
        queries: own.map(queryOverviewToApi),
        total,
        ...(own.length > 0 && next < total ? { next_offset: next } : {}),
      });
    })
    .all(methodNotAllowed('GET'));
}

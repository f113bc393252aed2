import type { Request, Response, Router } from 'express';
import { parseExecuteQuery, parseExecuteSql } from '../../queries/query-request.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { readJsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';
import { parseQueryId } from './results.js';

/** Parameter values (text values may be long) or SQL (64 KiB at most), with room to spare. */
const MAX_EXECUTE_BODY = 1024 * 1024;

/**
 * Running queries (DESIGN §5, §10): execute a saved query or ad-hoc SQL, which answers at
 * once with the pending execution; status; cancel.
 */
export function executionRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { queries, results } = deps;

  router
    .route('/query/:queryId/execute')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, ['performance']);
      const id = parseQueryId(String(req.params.queryId), 'query id');
      const request = parseExecuteQuery(await readJsonBody(req, MAX_EXECUTE_BODY));
      const execution = await queries.execute(accountOf(res), id, request);
      res.json({ execution_id: execution.id, state: execution.state });
    })
    .all(methodNotAllowed('POST'));

  router
    .route('/sql/execute')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const request = parseExecuteSql(await readJsonBody(req, MAX_EXECUTE_BODY));
      const execution = await queries.executeSql(accountOf(res), request);
      res.json({ execution_id: execution.id, state: execution.state });
    })
    .all(methodNotAllowed('POST'));

  router
    .route('/execution/:executionId/status')
    .get(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const readable = await queries.readableExecution(accountOf(res), String(req.params.executionId));
      res.json(results.status(await deps.executions.statusLook(readable)));
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/execution/:executionId/cancel')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      res.json({ success: await queries.cancel(accountOf(res), String(req.params.executionId)) });
    })
    .all(methodNotAllowed('POST'));
}

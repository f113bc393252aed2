import type { Request, Response, Router } from 'express';
import getRawBody from 'raw-body';
import { badRequest, notFound } from '../../errors.js';
import type { AppDeps } from '../app-deps.js';
import { authenticate } from '../authenticate.js';
import { refuseDeclaredOver } from '../declared-length.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';
import { parseQueryId } from './results.js';

const MAX_EXECUTE_BODY = 65_536;

/** The execute body the official clients send: `{query_parameters, performance}`; both optional. */
async function readExecuteBody(req: Request): Promise<void> {
  refuseDeclaredOver(req, MAX_EXECUTE_BODY);
  const raw = await getRawBody(req, { limit: MAX_EXECUTE_BODY, encoding: 'utf8' });
  if (raw.trim() === '') return;
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw badRequest('malformed JSON body');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the body must be a JSON object');
  const parameters = (body as { query_parameters?: unknown }).query_parameters;
  const empty =
    parameters === undefined ||
    parameters === null ||
    (Array.isArray(parameters) && parameters.length === 0) ||
    (typeof parameters === 'object' && Object.keys(parameters as object).length === 0);
  if (!empty)
    throw badRequest('saved queries take no parameters; send "query_parameters" empty or not at all');
}

export function executionRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { executions, results } = deps;

  router
    .route('/query/:queryId/execute')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, ['performance']);
      const id = parseQueryId(String(req.params.queryId), 'query id');
      if (!executions.query(id)) throw notFound(`no saved query with id ${id}`);
      await readExecuteBody(req);
      const execution = await executions.submit(id);
      res.json({ execution_id: execution.id, state: execution.state });
    })
    .all(methodNotAllowed('POST'));

  router
    .route('/execution/:executionId/status')
    .get(auth, (req: Request, res: Response) => {
      readQueryParams(req, []);
      res.json(results.status(String(req.params.executionId)));
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/execution/:executionId/cancel')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const execution = results.execution(String(req.params.executionId));
      res.json({ success: await executions.cancel(execution.id) });
    })
    .all(methodNotAllowed('POST'));
}

import type { Request, Response, Router } from 'express';
import { badRequest } from '../../errors.js';
import { AD_HOC_QUERY_ID, STATES, visibleState } from '../../executions/execution.js';
import { canSeeQuery } from '../../queries/query-access.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { integerParam, readQueryParams } from '../query-params.js';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1_000;
const KNOWN_STATES: readonly string[] = Object.values(STATES);

/**
 * A key's execution history (GET /v1/executions), newest first: each execution as its status
 * answers it, with its query's name, and an ad-hoc run's own SQL so that it can be run again.
 * Only the key's own runs: what others ran is theirs.
 */
export function executionHistoryRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { executions, queries, results } = deps;

  router
    .route('/executions')
    .get(auth, async (req: Request, res: Response) => {
      const params = readQueryParams(req, ['limit', 'offset', 'query_id', 'state']);
      const limit = integerParam('limit', params.get('limit'), { min: 1, max: MAX_LIMIT }) ?? DEFAULT_LIMIT;
      const offset = integerParam('offset', params.get('offset'), { min: 0 }) ?? 0;
      const queryId = integerParam('query_id', params.get('query_id'), { min: 0 });
      const state = params.get('state');
      if (state !== undefined && !KNOWN_STATES.includes(state))
        throw badRequest(
          `query parameter "state" must be one of ${KNOWN_STATES.join(', ')}, got ${JSON.stringify(state.slice(0, 64))}`,
        );
      const account = accountOf(res);
      const now = Date.now();
      const mine = executions
        .ofOwner(account.handle)
        .filter(
          (e) =>
            (queryId === undefined || e.queryId === queryId) &&
            (state === undefined || visibleState(e, now) === state),
        );
      const page = mine
        .slice(Math.max(0, mine.length - offset - limit), Math.max(0, mine.length - offset))
        .reverse();
      const texts = await executions.sqlTexts(
        page.filter((e) => e.queryId === AD_HOC_QUERY_ID).map((e) => e.id),
      );
      const items = [];
      for (const execution of page) {
        const found =
          execution.queryId === AD_HOC_QUERY_ID ? undefined : await queries.find(execution.queryId);
        // A query that became another's private one since keeps its name to itself.
        const query = found && canSeeQuery(account, found) ? found : undefined;
        const text = texts.get(execution.id);
        items.push({
          ...results.status(execution),
          ...(query ? { query_name: query.name } : {}),
          ...(text !== undefined ? { query_sql: text } : {}),
        });
      }
      const next = offset + page.length;
      res.json({
        executions: items,
        total: mine.length,
        ...(page.length > 0 && next < mine.length ? { next_offset: next } : {}),
      });
    })
    .all(methodNotAllowed('GET'));
}

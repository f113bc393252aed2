import path from 'node:path';
import type { Request, Response, Router } from 'express';
import type { Execution } from '../../executions/execution.js';
import { writeParquet } from '../../results/parquet-export.js';
import { PARQUET_FORMAT } from '../../results/result-format.js';
import { parseResultRequest, RESULT_PARAMETERS, type ResultRequest } from '../../results/result-request.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';
import { sendAnswer } from '../send-answer.js';
import { parseQueryId } from './results.js';

/**
 * GET /execution/{id}/results/parquet and /query/{id}/results/parquet: the result as a
 * Parquet file, for pandas, polars and DuckDB users. The same executions, found by the same
 * access rules (queries.readableExecution, queries.latestExecution with `params.NAME`), and
 * the same parameters as the JSON and CSV results; no datapoint cap, since the file is
 * streamed from disk rather than built in memory.
 */

const PARAMETER_PREFIX = 'params.';

/** The result parameters, and the query parameter values (`params.NAME`) by name. */
function checkRequest(req: Request): { request: ResultRequest; values: Map<string, string> } {
  const params = readQueryParams(req, RESULT_PARAMETERS, undefined, PARAMETER_PREFIX);
  const values = new Map<string, string>();
  for (const [name, value] of params)
    if (name.startsWith(PARAMETER_PREFIX)) values.set(name.slice(PARAMETER_PREFIX.length), value);
  return { request: parseResultRequest(params), values };
}

export function parquetResultRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { queries, results, database } = deps;
  const tmpDir = path.join(deps.config.dataDir, 'tmp');

  async function sendParquet(res: Response, execution: Execution, request: ResultRequest): Promise<void> {
    const servable = results.servable(execution, request);
    await deps.executions.resultStored(servable.id);
    const body = await writeParquet(database, servable, request, tmpDir);
    // Sent like a large page: from buffers kept between answers, a client that stops reading
    // let go, and the file removed however the answer ends.
    await sendAnswer(res, {
      status: 200,
      contentType: PARQUET_FORMAT.contentType,
      headers: { 'Content-Disposition': `attachment; filename="${execution.id.toLowerCase()}.parquet"` },
      body,
      datapoints: 0,
    });
  }

  router
    .route('/execution/:executionId/results/parquet')
    .get(auth, async (req: Request, res: Response) => {
      // `params.NAME` is accepted and changes nothing, as on the JSON and CSV results.
      const { request } = checkRequest(req);
      const account = accountOf(res);
      const execution = await queries.readableExecution(account, String(req.params.executionId));
      await sendParquet(res, execution, { ...request, reader: account.handle });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/query/:queryId/results/parquet')
    .get(auth, async (req: Request, res: Response) => {
      const id = parseQueryId(String(req.params.queryId), 'query id');
      const { request, values } = checkRequest(req);
      const account = accountOf(res);
      const execution = await queries.latestExecution(account, id, values);
      await sendParquet(res, execution, { ...request, reader: account.handle });
    })
    .all(methodNotAllowed('GET'));
}

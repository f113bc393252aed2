import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Request, Response, Router } from 'express';
import type { Execution } from '../../executions/execution.js';
import { writeParquet } from '../../results/parquet-export.js';
import { parseResultRequest, RESULT_PARAMETERS } from '../../results/result-request.js';
import type { AppDeps } from '../app-deps.js';
import { authenticate } from '../authenticate.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';
import { parseQueryId } from './results.js';

/**
 * GET /execution/{id}/results/parquet and /query/{id}/results/parquet: the result as a
 * Parquet file, for pandas, polars and DuckDB users. The same executions, the same access
 * rules and the same parameters as the JSON and CSV results; no datapoint cap, since the
 * file is streamed from disk rather than built in memory.
 */

const PARQUET_TYPE = 'application/vnd.apache.parquet';

export function parquetResultRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);
  const { results, database } = deps;
  const tmpDir = path.join(deps.config.dataDir, 'tmp');

  async function sendParquet(req: Request, res: Response, execution: Execution): Promise<void> {
    const request = parseResultRequest(readQueryParams(req, RESULT_PARAMETERS));
    const { file, bytes } = await writeParquet(
      database,
      results.servable(execution, request),
      request,
      tmpDir,
    );
    try {
      res.writeHead(200, {
        'Content-Type': PARQUET_TYPE,
        'Content-Length': String(bytes),
        'Content-Disposition': `attachment; filename="${execution.id.toLowerCase()}.parquet"`,
      });
      await pipeline(fs.createReadStream(file), res);
    } catch (error) {
      // The client went away mid-file: nothing left to answer.
      if (!res.headersSent) throw error;
      res.destroy();
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }

  router
    .route('/execution/:executionId/results/parquet')
    .get(auth, async (req: Request, res: Response) => {
      await sendParquet(req, res, results.execution(String(req.params.executionId)));
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/query/:queryId/results/parquet')
    .get(auth, async (req: Request, res: Response) => {
      const id = parseQueryId(String(req.params.queryId), 'query id');
      await sendParquet(req, res, results.latestExecution(id));
    })
    .all(methodNotAllowed('GET'));
}

import type { RequestListener } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError } from '../errors.js';
import type { AppDeps } from './app-deps.js';
import { errorHandler } from './error-handler.js';
import { mountSteps } from './express-door.js';
import { fastLane } from './fast-lane.js';
import { LaneRoutes } from './lane-routes.js';
import { metricsEndpoint } from './metrics-endpoint.js';
import { mountLabel } from './request-metrics.js';
import { requestPipeline } from './request-pipeline.js';
import { accountRoutes } from './routes/account.js';
import { datasetRoutes } from './routes/datasets.js';
import { executionHistoryRoutes } from './routes/execution-history.js';
import { executionRoutes } from './routes/executions.js';
import { materializedViewRoutes } from './routes/materialized-views.js';
import { parquetResultRoutes } from './routes/parquet-results.js';
import { pipelineRoutes } from './routes/pipelines.js';
import { queryRoutes } from './routes/queries.js';
import { resultRoutes } from './routes/results.js';
import { tableRoutes } from './routes/tables.js';
import { settingsPage } from './settings-page.js';
import { workspacePage } from './workspace-page.js';

/**
 * Builds the express app, with the fast lane in front of it, without listening: the CLI owns
 * start-up, tests listen on a free port. Every API path answers under /v1 and /api/v1 (the
 * official clients' bases). Both doors run the steps of request-pipeline.ts.
 */
export function createApp(deps: AppDeps): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const pipeline = requestPipeline(deps);
  const api = express.Router({ caseSensitive: true, strict: false });
  mountSteps(app, api, pipeline.steps);

  app.get('/health', (_req: Request, res: Response) => {
    res.json({ status: deps.database.isClosed ? 'closing' : 'ok' });
  });
  app.get('/metrics', metricsEndpoint(deps.metrics));

  // Results first: they are the hot path, express tries routes in order, and the lane's
  // routes must be the first of their paths.
  const lane = new LaneRoutes(pipeline.authenticate);
  resultRoutes(api, deps, lane);
  parquetResultRoutes(api, deps);
  executionRoutes(api, deps);
  queryRoutes(api, deps);
  accountRoutes(api, deps);
  tableRoutes(api, deps);
  datasetRoutes(api, deps);
  executionHistoryRoutes(api, deps);
  materializedViewRoutes(api, deps);
  pipelineRoutes(api, deps);
  app.use(['/v1', '/api/v1'], mountLabel('/v1'), api);
  app.use('/settings', mountLabel('/settings'), settingsPage());
  app.use(workspacePage());

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new ApiError('not_found', `no such path: ${req.method} ${req.path.slice(0, 200)}`));
  });
  app.use(errorHandler(deps.logger));
  return fastLane({ pipeline, routes: lane.routes, metrics: deps.metrics, logger: deps.logger }, app);
}

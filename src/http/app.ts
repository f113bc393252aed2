import type { RequestListener } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError } from '../errors.js';
import type { AppDeps } from './app-deps.js';
import { authFailureLimit } from './auth-failure-limit.js';
import { errorHandler } from './error-handler.js';
import { fastLane } from './fast-lane.js';
import { metricsEndpoint } from './metrics-endpoint.js';
import { rateLimit } from './rate-limit.js';
import { mountLabel } from './request-metrics.js';
import { observeRequests, requestObserver } from './request-observer.js';
import { accountRoutes } from './routes/account.js';
import { datasetRoutes } from './routes/datasets.js';
import { executionHistoryRoutes } from './routes/execution-history.js';
import { executionRoutes } from './routes/executions.js';
import { materializedViewRoutes } from './routes/materialized-views.js';
import { parquetResultRoutes } from './routes/parquet-results.js';
import { pipelineRoutes } from './routes/pipelines.js';
import { queryRoutes } from './routes/queries.js';
import { metricsAnswerer, resultRoutes } from './routes/results.js';
import { tableRoutes } from './routes/tables.js';
import { settingsPage } from './settings-page.js';
import { workspacePage } from './workspace-page.js';

/**
 * Builds the express app, with the metrics endpoint's fast lane in front of it, without
 * listening: the CLI owns start-up, tests listen on a free port. Every API path answers under
 * /v1 and /api/v1 (the official clients' bases).
 */
export function createApp(deps: AppDeps): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const observe = requestObserver(deps.logger, deps.metrics);
  app.use(observeRequests(observe));

  app.get('/health', (_req: Request, res: Response) => {
    res.json({ status: deps.database.isClosed ? 'closing' : 'ok' });
  });
  app.get('/metrics', metricsEndpoint(deps.metrics));

  const api = express.Router({ caseSensitive: true, strict: false });
  // Identifies the key once for the rate limits and the routes' authenticate().
  const authFailures = authFailureLimit(deps.config.authFailureLimit, deps.keys);
  const rateLimits = rateLimit(deps.config.rateLimits);
  api.use(authFailures.middleware);
  api.use(rateLimits.middleware);
  // Results first: they are the hot path, and express tries routes in order.
  const metricsAnswer = metricsAnswerer(deps.results);
  resultRoutes(api, deps, metricsAnswer);
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
  const { keys, metrics, logger } = deps;
  return fastLane({ keys, authFailures, rateLimits, observe, metrics, logger, metricsAnswer }, app);
}

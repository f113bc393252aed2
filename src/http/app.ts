import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError } from '../errors.js';
import type { AppDeps } from './app-deps.js';
import { authFailureLimit } from './auth-failure-limit.js';
import { errorHandler } from './error-handler.js';
import { metricsEndpoint } from './metrics-endpoint.js';
import { rateLimit } from './rate-limit.js';
import { requestLog } from './request-log.js';
import { mountLabel, requestMetrics } from './request-metrics.js';
import { accountRoutes } from './routes/account.js';
import { executionRoutes } from './routes/executions.js';
import { parquetResultRoutes } from './routes/parquet-results.js';
import { queryRoutes } from './routes/queries.js';
import { resultRoutes } from './routes/results.js';
import { tableRoutes } from './routes/tables.js';
import { settingsPage } from './settings-page.js';
import { workspacePage } from './workspace-page.js';

/**
 * Builds the express app without listening: the CLI owns start-up, tests listen on a
 * free port. Every API path answers under /v1 and /api/v1 (the official clients' bases).
 */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestLog(deps.logger));
  app.use(requestMetrics(deps.metrics));

  app.get('/health', (_req: Request, res: Response) => {
    res.json({ status: deps.database.isClosed ? 'closing' : 'ok' });
  });
  app.get('/metrics', metricsEndpoint(deps.metrics));

  const api = express.Router({ caseSensitive: true, strict: false });
  // Identifies the key once for the rate limits and the routes' authenticate().
  api.use(authFailureLimit(deps.config.authFailureLimit, deps.keys));
  api.use(rateLimit(deps.config.rateLimits));
  // Results first: they are the hot path, and express tries routes in order.
  resultRoutes(api, deps);
  parquetResultRoutes(api, deps);
  executionRoutes(api, deps);
  queryRoutes(api, deps);
  accountRoutes(api, deps);
  tableRoutes(api, deps);
  app.use(['/v1', '/api/v1'], mountLabel('/v1'), api);
  app.use('/settings', mountLabel('/settings'), settingsPage());
  app.use(workspacePage());

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new ApiError('not_found', `no such path: ${req.method} ${req.path.slice(0, 200)}`));
  });
  app.use(errorHandler(deps.logger));
  return app;
}

import type { KeyStore } from '../auth/key-store.js';
import type { Config } from '../config/config.js';
import type { Executions } from '../executions/executions.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { Queries } from '../queries/queries.js';
import type { Results } from '../results/results.js';
import type { Database } from '../storage/database.js';
import type { MaterializedViews } from '../transform/materialized-views.js';
import type { Pipelines } from '../transform/pipelines.js';
import type { Clock } from '../transform/view-scheduler.js';
import type { RequestStep } from './request-step.js';

/** Everything the HTTP layer is built from; the CLI makes these, tests may make their own. */
export interface AppDeps {
  config: Config;
  database: Database;
  keys: KeyStore;
  logger: Logger;
  executions: Executions;
  queries: Queries;
  results: Results;
  metrics: ServiceMetrics;
  views: MaterializedViews;
  pipelines: Pipelines;
  /** The time materialized views' schedules read (the system's; a test's own in tests). */
  clock: Clock;
  /** Absolute base of links the service hands out (`next_uri`): PUBLIC_BASE_URL or the bound address. */
  baseUrl: () => string;
  /** Steps added to the request pipeline after its own, in both doors (tests). */
  requestSteps?: readonly RequestStep[] | undefined;
}

import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { KeyStore } from './auth/key-store.js';
import { type Config, duckdbAllowedDirectories, duckdbSettings } from './config/config.js';
import { loadDemoData } from './demo/demo-data.js';
import { Executions } from './executions/executions.js';
import { Scheduler } from './executions/scheduler.js';
import type { StatusWaitOptions } from './executions/status-wait.js';
import { createApp } from './http/app.js';
import { answerExpectContinue } from './http/expect-continue.js';
import type { RequestStep } from './http/request-step.js';
import type { Logger } from './log.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { PgCatalog } from './pgwire/catalog-queries.js';
import { type PgListener, startPgListener } from './pgwire/listener.js';
import { Queries } from './queries/queries.js';
import { configuredQueryFiles, type QueryFile } from './queries/query-files.js';
import { SqlChecker } from './queries/sandbox/checker-pool.js';
import { ResultRows } from './results/result-rows.js';
import { Results } from './results/results.js';
import { ANSWERS_TUNING, RESULT_ROWS_TUNING } from './results/tuning.js';
import { Database, onStatementsIdle } from './storage/database.js';
import { defaultReserve, diskSpace } from './storage/disk-space.js';
import { migrate } from './storage/service-schema.js';
import { dropAbandonedUploads } from './tables/csv-loader.js';
import { expireAllVersions, versionPolicy } from './tables/table-versions.js';
import { MaterializedViews } from './transform/materialized-views.js';
import { Pipelines } from './transform/pipelines.js';
import { type Clock, SYSTEM_CLOCK, ViewScheduler } from './transform/view-scheduler.js';
import { threadPoolSize, threadsNeeded } from './workload/thread-pool.js';
import { keepWorkerThreadsLower, restoreDemotedThreads } from './workload/thread-priority.js';

/**
 * The running service: database, key store and HTTP server, started and stopped as one.
 * The CLI's `serve` and the tests both start it through here.
 */

export const DATABASE_FILE = 'warehouse.duckdb';

/** How long in-flight requests get to finish at shutdown before connections are cut. */
const SHUTDOWN_GRACE_MS = 3_000;
/** How long queued writes get to commit at shutdown before they are interrupted. */
const WRITE_GRACE_MS = 5_000;
/** How long shutdown waits for the records of runs already seen completed (each takes ~1 ms). */
const RECORDS_GRACE_MS = 1_000;

/** How often table versions past their hours are dropped. */
const VERSION_EXPIRY_MS = 10 * 60_000;
/** The operator's query files that may run at once (users' queries: MAX_RUNNING_QUERIES). */
/** Reader connections of the catalog (table lists, records) and of results work (storage/reader-pool.ts). */
const CATALOG_READERS = 2;
const RESULT_READERS = 4;
/** The scheduler's refreshes of the operator's query files that may run at once (users' runs: MAX_RUNNING_QUERIES). */
const OPERATOR_QUERIES_AT_ONCE = 2;

export interface RunningService {
  /** The address actually bound, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The local key, when this data directory has one (first start or dev-api-key.txt). */
  localKey: { key: string; created: boolean } | undefined;
  database: Database;
  keys: KeyStore;
  executions: Executions;
  /** The operator's query files, as configured. */
  queryFiles: QueryFile[];
  queries: Queries;
  /** The sandbox's checker of users' SQL (worker threads, started on first use or by `warm`). */
  sqlChecker: SqlChecker;
  views: MaterializedViews;
  server: http.Server;
  /** The Postgres wire protocol's listener; undefined when PG_PORT is off. */
  pg: PgListener | undefined;
  close(): Promise<void>;
}

/** What tests may give a service besides its configuration. */
export interface ServiceHooks {
  /** Steps added to the request pipeline, in both doors (http/request-pipeline.ts). */
  requestSteps?: readonly RequestStep[];
  /** The time materialized views' schedules read (default: the system's). */
  clock?: Clock;
  /** How often the views' scheduler looks at the clock (default: every second). */
  scheduleTickMs?: number;
  /** When a status request waits for its execution's end (default: executions/status-wait.ts). */
  statusWait?: StatusWaitOptions;
}

/** Statements that may run at once: every lane's slots, the readers, the writer. */
function warnOfSmallThreadPool(config: Config, logger: Logger): void {
  const statements =
    config.maxRunningQueries + OPERATOR_QUERIES_AT_ONCE + CATALOG_READERS + RESULT_READERS + 1;
  const needed = threadsNeeded(statements);
  if (threadPoolSize() >= needed) return;
  logger.warn(
    { threadPool: threadPoolSize(), needed },
    `libuv's thread pool has ${threadPoolSize()} threads, fewer than the ${needed} the statements that may run at once need: start the process with UV_THREADPOOL_SIZE=${needed} or more (npm start sets 64), or one long query makes others wait`,
  );
}

async function prepareDataDir(dataDir: string): Promise<string> {
  const tmpDir = path.join(dataDir, 'tmp');
  try {
    await fs.mkdir(dataDir, { recursive: true });
    await fs.access(dataDir, fs.constants.W_OK);
    // Leftovers of uploads and of large result pages cut short by a crash.
    await fs.rm(tmpDir, { recursive: true, force: true });
    await fs.mkdir(tmpDir, { recursive: true });
  } catch (error) {
    throw new Error(`the data directory ${dataDir} is not writable: ${(error as Error).message}`);
  }
  return tmpDir;
}

function boundUrl(server: http.Server, host: string): string {
  const address = server.address() as AddressInfo;
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  const shown = wildcard ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${address.port}`;
}

interface OpenedDatabase {
  database: Database;
  /** DATA_DIR/tmp, emptied: uploads' bodies and large result pages on their way. */
  tmpDir: string;
  /** Disk space kept free (DISK_RESERVE_BYTES or the default for the disk). */
  reserveBytes: number;
}

/** The database file, opened and migrated; on a first start, filled with the demo data set. */
async function openDatabase(config: Config, logger: Logger): Promise<OpenedDatabase> {
  const tmpDir = await prepareDataDir(config.dataDir);
  const databaseFile = path.join(config.dataDir, DATABASE_FILE);
  const fresh = !fsSync.existsSync(databaseFile);
  const disk = await diskSpace(config.dataDir);
  const reserveBytes = config.diskReserveBytes ?? defaultReserve(disk?.total);
  const database = await Database.open({
    path: databaseFile,
    settings: duckdbSettings(config, disk?.free, reserveBytes),
    allowedDirectories: duckdbAllowedDirectories(config),
    catalogReaders: CATALOG_READERS,
    resultReaders: RESULT_READERS,
    resultsTimeoutMs: config.resultsTimeoutSeconds * 1000,
  });
  try {
    await migrate(database);
    await dropAbandonedUploads(database);
    await database.write((session) => expireAllVersions(session, versionPolicy(config)));
    if (fresh && config.demoData) {
      // A first start shows real metrics at once: scale 1 loads in well under a second.
      const started = performance.now();
      const summary = await loadDemoData(database, { scale: 1 });
      logger.info(
        { scale: 1, ms: Math.round(performance.now() - started), stakers: summary.stakers },
        'loaded the demo data set',
      );
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  return { database, tmpDir, reserveBytes };
}

/** What runs queries: executions, the sandbox's checker, saved queries, views and pipelines. */
async function openWork(
  config: Config,
  logger: Logger,
  hooks: ServiceHooks,
  { database, reserveBytes }: OpenedDatabase,
  keys: KeyStore,
) {
  const queryFiles = configuredQueryFiles(config);
  const executions = new Executions(
    database,
    {
      maxResultRows: config.maxResultRows,
      retentionHours: config.resultRetentionHours,
      lanes: {
        operator: {
          slots: OPERATOR_QUERIES_AT_ONCE,
          perKey: OPERATOR_QUERIES_AT_ONCE,
          queuedPerKey: Number.POSITIVE_INFINITY,
        },
        users: {
          slots: config.maxRunningQueries,
          perKey: config.maxRunningQueriesPerKey,
          queuedPerKey: config.maxQueuedQueriesPerKey,
        },
      },
      usersTimeoutSeconds: config.queryTimeoutSeconds,
      ...(hooks.statusWait ? { statusWait: hooks.statusWait } : {}),
      storage: {
        maxResultBytes: config.maxResultBytes,
        keyResultBytes: config.resultStoragePerKey,
        keyExecutions: config.maxExecutionsPerKey,
        reserveBytes,
        dataDir: config.dataDir,
      },
    },
    logger,
  );
  await executions.open();
  const sqlChecker = new SqlChecker({
    workers: config.sandboxWorkers,
    maxWaiting: config.sandboxQueueLimit,
    maxWaitMs: config.sandboxWaitSeconds * 1000,
    logger,
  });
  const queries = new Queries(database, executions, queryFiles, sqlChecker);
  const views = new MaterializedViews(database, executions, queries, logger, {
    accountFor: (handle) => keys.accountFor(handle),
  });
  await views.open();
  const pipelines = new Pipelines(database, executions, queries, views, logger);
  await pipelines.open();
  const clock = hooks.clock ?? SYSTEM_CLOCK;
  const viewScheduler = new ViewScheduler(views, logger, clock, hooks.scheduleTickMs);
  return { queryFiles, executions, sqlChecker, queries, views, pipelines, clock, viewScheduler };
}

type Work = Awaited<ReturnType<typeof openWork>>;

/** What answers results: the result caches, and /metrics' series (executions' among them). */
function openResults(
  config: Config,
  { database, tmpDir }: OpenedDatabase,
  work: Work,
  baseUrl: () => string,
) {
  const { executions, queryFiles } = work;
  const metrics = new ServiceMetrics({ processMetrics: true });
  const fileIds = new Set(queryFiles.map((q) => q.id));
  // Users' queries are counted together: one series per query would grow without bound.
  executions.onFinished((execution) =>
    metrics.executionFinished(
      execution,
      fileIds.has(execution.queryId) ? String(execution.queryId) : 'users',
    ),
  );
  const resultRows = new ResultRows(database, { ...RESULT_ROWS_TUNING, tmpDir }, (id) =>
    executions.resultStored(id),
  );
  // A finished run's client asks for its first page next.
  executions.onFinished((execution, rows) => {
    if (rows) resultRows.remember(execution, rows);
  });
  const results = new Results(executions, resultRows, {
    ...ANSWERS_TUNING,
    maxDatapointsPerRequest: config.maxDatapointsPerRequest,
    baseUrl,
  });
  metrics.watchCaches(() => results.caches);
  metrics.watchDatabaseMemory(() => database.memoryBytes());
  return { metrics, results };
}

/** The HTTP server, listening on PORT and HOST. */
async function listen(config: Config, app: http.RequestListener): Promise<http.Server> {
  const server = http.createServer(app);
  answerExpectContinue(server, config.maxUploadBytes);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // Node's own answers to unparseable requests are bare text; ours are JSON like the rest.
    if (!socket.writable) return;
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = JSON.stringify({
      error: status === 431 ? 'request headers too large' : 'malformed HTTP request',
    });
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** The Postgres wire protocol's listener, when PG_PORT is on, and its catalog. */
async function startPg(config: Config, logger: Logger, keys: KeyStore, database: Database, work: Work) {
  const { executions, queries } = work;
  if (config.pgPort === undefined) return { catalog: undefined, pg: undefined };
  const catalog = await PgCatalog.open(database);
  try {
    const lane = <T>(owner: string, run: () => Promise<T>) => executions.inUsersLane(owner, run);
    const pg = await startPgListener(
      { config, keys, queries, database, catalog, logger, lane },
      config.pgPort,
    );
    return { catalog, pg };
  } catch (error) {
    await catalog.close();
    throw error;
  }
}

/** The work that runs on its own while the service does: refreshes, expiries, views' schedules. */
function startBackground(config: Config, logger: Logger, database: Database, work: Work): () => void {
  const scheduler = new Scheduler(work.executions, work.queryFiles, logger);
  scheduler.start();
  // Table versions past TABLE_VERSION_HOURS go, even for tables nobody writes any more.
  const expiringVersions = setInterval(() => {
    database
      .write((session) => expireAllVersions(session, versionPolicy(config)))
      .catch((error: unknown) => logger.warn({ err: error }, 'expiring table versions failed'));
  }, VERSION_EXPIRY_MS);
  expiringVersions.unref();
  work.viewScheduler.start();
  const stopLowering = keepWorkerThreadsLower();
  const stopRestoring = onStatementsIdle(restoreDemotedThreads);
  return () => {
    stopRestoring();
    stopLowering();
    scheduler.stop();
    clearInterval(expiringVersions);
    work.viewScheduler.stop();
  };
}

interface Running {
  database: Database;
  work: Work;
  results: Results;
  server: http.Server;
  catalog: PgCatalog | undefined;
  pg: PgListener | undefined;
  stopBackground: () => void;
}

/** Stops everything, once however often it is called: background work, then connections, then the database. */
function closer({
  database,
  work,
  results,
  server,
  catalog,
  pg,
  stopBackground,
}: Running): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      stopBackground();
      work.executions.close();
      // Its sessions let their DuckDB connections go before the database closes.
      const pgClosed = pg?.close() ?? Promise.resolve();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // A request that finishes in the grace period leaves its keep-alive connection idle.
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      await pgClosed;
      await catalog?.close();
      clearInterval(idle);
      clearTimeout(timer);
      await results.close();
      await work.sqlChecker.close();
      // Runs seen completed write their records on connections the database's close would
      // interrupt (ExecutionStore.saveAfter): a moment for them, bounded.
      await Promise.race([
        work.executions.store.landed(),
        delay(RECORDS_GRACE_MS, undefined, { ref: false }),
      ]);
      // No final checkpoint: its time is not bounded (DuckDB's checkpoint of a 10,000-column
      // table's 0.5 MB of WAL took 22.8 s), and the next start replays the WAL instead.
      await database.close(WRITE_GRACE_MS, 0);
    })();
    return closing;
  };
}

export async function startService(
  config: Config,
  logger: Logger,
  hooks: ServiceHooks = {},
): Promise<RunningService> {
  const opened = await openDatabase(config, logger);
  const { database } = opened;
  const localKey = KeyStore.ensureLocalKey(config.dataDir, config.apiKeys);
  const keys = KeyStore.forDataDir(config.apiKeys, config.dataDir);

  warnOfSmallThreadPool(config, logger);
  const work = await openWork(config, logger, hooks, opened, keys);
  const { executions, queryFiles, queries, sqlChecker, views, pipelines, clock } = work;
  let url = '';
  const baseUrl = () => config.publicBaseUrl ?? url;
  const { metrics, results } = openResults(config, opened, work, baseUrl);
  const app = createApp({
    config,
    database,
    keys,
    logger,
    executions,
    queries,
    results,
    metrics,
    baseUrl,
    views,
    pipelines,
    clock,
    requestSteps: hooks.requestSteps,
  });
  const server = await listen(config, app).catch(async (error) => {
    await sqlChecker.close();
    await database.close();
    throw error;
  });
  url = boundUrl(server, config.host);
  const { catalog, pg } = await startPg(config, logger, keys, database, work).catch(async (error) => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await sqlChecker.close();
    await database.close();
    throw error;
  });
  const stopBackground = startBackground(config, logger, database, work);
  const close = closer({ database, work, results, server, catalog, pg, stopBackground });
  return {
    url,
    localKey,
    database,
    keys,
    executions,
    queryFiles,
    queries,
    sqlChecker,
    views,
    server,
    pg,
    close,
  };
}

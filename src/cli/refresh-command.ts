import fs from 'node:fs';
import path from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { duckdbAllowedDirectories, duckdbSettings, loadConfig } from '../config/config.js';
import { type Execution, hasResult, OPERATOR, STATES } from '../executions/execution.js';
import { Executions } from '../executions/executions.js';
import { configuredQueryFiles } from '../queries/query-files.js';
import { DATABASE_FILE } from '../service.js';
import { Database } from '../storage/database.js';
import { migrate } from '../storage/service-schema.js';
import { addConfigFlags, environmentWithFlags } from './config-flags.js';
import { CliError, EXIT } from './exit-codes.js';

/**
 * `refresh`: runs the saved queries once, as the scheduler would, records the executions,
 * purges expired ones, and exits: for cron-style set-ups where no server runs all the time.
 * It needs the database file to itself, so it refuses (exit 3) while a server holds it.
 * Exit 0 when every query produced a result, 1 when one failed or a signal stopped the run.
 */

interface RefreshOptions {
  query?: number[];
  logLevel?: string;
  [flag: string]: unknown;
}

function parseQueryId(value: string, previous: number[] | undefined): number[] {
  const id = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(id) || id <= 0) {
    throw new InvalidArgumentError('a saved-query id is a positive whole number.');
  }
  return [...(previous ?? []), id];
}

function describe(execution: Execution | undefined, name: string, id: number): string {
  const head = `${id} (${name}):`;
  if (!execution) return `${head} not run`;
  const seconds =
    execution.startedAt && execution.endedAt
      ? ` in ${((execution.endedAt.getTime() - execution.startedAt.getTime()) / 1000).toFixed(1)} s`
      : '';
  switch (execution.state) {
    case STATES.completed:
      return `${head} completed, ${execution.rowCount?.toLocaleString('en-US')} rows${seconds} (execution ${execution.id})`;
    case STATES.completedPartial:
      return `${head} completed partially (over MAX_RESULT_ROWS), ${execution.rowCount?.toLocaleString('en-US')} rows kept${seconds} (execution ${execution.id})`;
    case STATES.failed:
      return `${head} FAILED${seconds}: ${execution.error?.message ?? 'unknown error'} (execution ${execution.id})`;
    default:
      return `${head} ${execution.state.replace('QUERY_STATE_', '').toLowerCase()} (execution ${execution.id})`;
  }
}

async function refresh(options: RefreshOptions): Promise<void> {
  // The report goes to stdout as plain lines; JSON logs to stderr, and only errors unless asked.
  const config = loadConfig(
    environmentWithFlags({ ...options, logLevel: options.logLevel ?? process.env.LOG_LEVEL ?? 'error' }),
  );
  const logger = pino(
    { level: config.logLevel, base: undefined, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
  const queries = configuredQueryFiles(config);
  const wanted = options.query ?? queries.map((q) => q.id);
  const unknown = wanted.filter((id) => !queries.some((q) => q.id === id));
  if (unknown.length > 0) {
    throw new CliError(
      `no saved query ${unknown.join(', ')}; the saved queries are ${queries.map((q) => q.id).join(', ') || 'none'}`,
      EXIT.usage,
    );
  }
  const file = path.join(config.dataDir, DATABASE_FILE);
  if (!fs.existsSync(file)) {
    throw new CliError(
      `no database at ${file}: start the service once (or run demo) to create it`,
      EXIT.failure,
    );
  }
  const database = await Database.open({
    path: file,
    settings: duckdbSettings(config),
    allowedDirectories: duckdbAllowedDirectories(config),
  });
  let interrupted: string | undefined;
  const executions = new Executions(
    database,
    { maxResultRows: config.maxResultRows, retentionHours: config.resultRetentionHours },
    logger,
  );
  const onSignal = (signal: string) => {
    interrupted ??= signal;
    executions.close();
  };
  const onTerm = () => onSignal('SIGTERM');
  const onInt = () => onSignal('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  const submitted: Execution[] = [];
  try {
    await migrate(database);
    await executions.open();
    for (const id of wanted) {
      const query = queries.find((q) => q.id === id);
      if (query && !interrupted)
        submitted.push(
          await executions.submit({ queryId: id, sql: query.sql, owner: OPERATOR, lane: 'operator' }),
        );
    }
    await executions.whenIdle();
    if (!interrupted) await executions.purgeExpired();
  } finally {
    await database.close();
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
  }
  if (interrupted) throw new CliError(`stopped by ${interrupted} before the refresh finished`, EXIT.failure);
  const finished = submitted.map((e) => executions.get(e.id) ?? e);
  for (const execution of finished) {
    const name = queries.find((q) => q.id === execution.queryId)?.name ?? '';
    process.stdout.write(`${describe(execution, name, execution.queryId)}\n`);
  }
  if (!finished.every(hasResult)) throw new CliError('a saved query failed', EXIT.failure);
}

export function addRefreshCommand(program: Command): void {
  addConfigFlags(
    program
      .command('refresh')
      .description('run the saved queries once and exit (needs the database file: no server may hold it)')
      .option('--query <id>', 'run only this saved query (repeatable)', parseQueryId),
    [
      'DATA_DIR',
      'QUERIES_DIR',
      'REFRESH_INTERVAL_SECONDS',
      'MAX_RESULT_ROWS',
      'RESULT_RETENTION_HOURS',
      'LOG_LEVEL',
    ],
  ).action(refresh);
}

import { type Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config/config.js';

/** Each environment variable of the configuration, as a flag that overrides it. */
const FLAGS: readonly [flag: string, variable: string, description: string][] = [
  ['--port <port>', 'PORT', 'listen port (0 = any free port)'],
  ['--host <host>', 'HOST', 'listen address'],
  ['--data-dir <dir>', 'DATA_DIR', 'where the database, keys and temporary files live'],
  ['--public-base-url <url>', 'PUBLIC_BASE_URL', 'absolute base of next_uri links'],
  [
    '--api-keys <list>',
    'API_KEYS',
    'KEY=HANDLE[:PLAN][:admin], comma-separated; other local users can read a command line, so prefer `keys create`',
  ],
  ['--refresh-interval-seconds <n>', 'REFRESH_INTERVAL_SECONDS', 'how often saved queries run'],
  ['--max-upload-bytes <n>', 'MAX_UPLOAD_BYTES', 'an upload body must be smaller than this'],
  [
    '--max-datapoints-per-request <n>',
    'MAX_DATAPOINTS_PER_REQUEST',
    'default cap on rows x columns of a page',
  ],
  ['--max-result-rows <n>', 'MAX_RESULT_ROWS', 'larger results are kept truncated (partial)'],
  ['--result-retention-hours <n>', 'RESULT_RETENTION_HOURS', 'how long an execution is kept'],
  ['--rate-limits <spec>', 'RATE_LIMITS', 'PLAN:READS/WRITES per minute, comma-separated, or off'],
  [
    '--auth-failure-limit <n>',
    'AUTH_FAILURE_LIMIT',
    'failed authentications per minute per client address before 429, or off',
  ],
  ['--queries-dir <dir>', 'QUERIES_DIR', 'extra folder of saved-query SQL files'],
  ['--log-level <level>', 'LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
  ['--demo-data <on|off>', 'DEMO_DATA', 'fill a fresh data directory with the demo restaking data'],
  [
    '--max-running-queries <n>',
    'MAX_RUNNING_QUERIES',
    "users' executions that run at once, all keys together; the rest wait, keys taking turns",
  ],
  [
    '--max-running-queries-per-key <n>',
    'MAX_RUNNING_QUERIES_PER_KEY',
    "one key's executions that run at once",
  ],
  [
    '--max-queued-queries-per-key <n>',
    'MAX_QUEUED_QUERIES_PER_KEY',
    "one key's executions waiting at once; more are refused with 429",
  ],
  [
    '--query-timeout-seconds <n>',
    'QUERY_TIMEOUT_SECONDS',
    "a user's execution is stopped (FAILED) after this long",
  ],
  ['--pg-port <port>', 'PG_PORT', 'Postgres wire protocol port (0 = any free port), or off'],
  [
    '--pg-max-connections <n>',
    'PG_MAX_CONNECTIONS',
    'Postgres wire connections open at once; more are refused',
  ],
  ['--pg-tls-cert <file>', 'PG_TLS_CERT', 'PEM certificate for TLS on the Postgres wire (with PG_TLS_KEY)'],
  ['--pg-tls-key <file>', 'PG_TLS_KEY', 'PEM private key for TLS on the Postgres wire (with PG_TLS_CERT)'],
  [
    '--table-versions-kept <n>',
    'TABLE_VERSIONS_KEPT',
    'writes of a table whose previous version is kept for restore (0 keeps none)',
  ],
  ['--table-version-hours <n>', 'TABLE_VERSION_HOURS', 'hours a table version is kept at most'],
  [
    '--results-timeout-seconds <n>',
    'RESULTS_TIMEOUT_SECONDS',
    'a results statement (a page, a sort, a Parquet file) is stopped (503) after this long',
  ],
  ['--max-result-bytes <size>', 'MAX_RESULT_BYTES', 'a larger result (as JSON) is kept truncated (partial)'],
  [
    '--result-storage-per-key <size>',
    'RESULT_STORAGE_PER_KEY',
    "bytes of one key's kept results; past it its oldest results expire",
  ],
  [
    '--max-executions-per-key <n>',
    'MAX_EXECUTIONS_PER_KEY',
    "one key's finished executions kept; past it its oldest are removed",
  ],
  [
    '--disk-reserve <size>',
    'DISK_RESERVE',
    "free disk space under DATA_DIR that users' results and spills may not take",
  ],
  [
    '--spill-limit <size>',
    'SPILL_LIMIT',
    "DuckDB's temporary files at most (default: half the free space above the reserve)",
  ],
  ['--sandbox-workers <n>', 'SANDBOX_WORKERS', "worker threads that check users' SQL"],
  [
    '--sandbox-queue-limit <n>',
    'SANDBOX_QUEUE_LIMIT',
    'SQL checks that may wait for a worker; more are refused (503)',
  ],
  [
    '--sandbox-wait-seconds <n>',
    'SANDBOX_WAIT_SECONDS',
    'how long a SQL check may wait for a worker before it is refused (503)',
  ],
  [
    '--duckdb-memory-limit <size>',
    'DUCKDB_MEMORY_LIMIT',
    "DuckDB's memory limit, e.g. 4GB (default 80% of RAM)",
  ],
];

/**
 * Checks a flag's value as the configuration would check the variable, so a bad value is
 * refused while parsing, naming the flag, before anything starts.
 */
function checkedAs(variable: string) {
  return (value: string): string => {
    try {
      loadConfig({ [variable]: value });
    } catch (error) {
      if (error instanceof ConfigError) throw new InvalidArgumentError(error.message);
      throw error;
    }
    return value;
  };
}

const UNCHECKED_ALONE = new Set(['API_KEYS', 'PG_TLS_CERT', 'PG_TLS_KEY']);

export function addConfigFlags(command: Command, only?: readonly string[]): Command {
  for (const [flag, variable, description] of FLAGS) {
    if (only && !only.includes(variable)) continue;
    const option = new Option(flag, `${description} (env ${variable})`);
    // Commander quotes a refused value back, and a key list must not end up in a log. The
    // TLS files are checked as a pair once the flags are merged with the environment.
    if (!UNCHECKED_ALONE.has(variable)) option.argParser(checkedAs(variable));
    command.addOption(option);
  }
  return command;
}

/** The environment with the given flags written over it. */
export function environmentWithFlags(options: Record<string, unknown>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [flag, variable] of FLAGS) {
    const name = flag
      .slice(2, flag.indexOf(' '))
      .replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
    const value = options[name];
    if (typeof value === 'string') env[variable] = value;
  }
  return env;
}

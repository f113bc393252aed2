import path from 'node:path';

/**
 * The service's configuration, read once at start from the environment (DESIGN.md §2);
 * CLI flags override single variables by writing into the same map before parsing.
 */
export type Plan = 'free' | 'premium';

export interface ConfiguredKey {
  key: string;
  handle: string;
  plan: Plan;
  admin: boolean;
}

export interface RateLimit {
  readsPerMinute: number;
  writesPerMinute: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Absolute base for `next_uri`; undefined means "the address actually bound". */
  publicBaseUrl: string | undefined;
  apiKeys: ConfiguredKey[];
  refreshIntervalSeconds: number;
  maxUploadBytes: number;
  maxDatapointsPerRequest: number;
  maxResultRows: number;
  resultRetentionHours: number;
  /** Per plan; undefined means rate limiting is off. */
  rateLimits: Record<Plan, RateLimit> | undefined;
  /** Failed authentications per minute per client address; undefined means no limit. */
  authFailureLimit: number | undefined;
  /** Extra folder of saved-query SQL files, besides the project's `queries/`. */
  queriesDir: string | undefined;
  logLevel: string;
  /** Whether a fresh data directory is filled with the demo restaking data set. */
  demoData: boolean;
  /** DuckDB's memory_limit, e.g. `2GB`; undefined leaves DuckDB's default (80% of RAM). */
  duckdbMemoryLimit: string | undefined;
  /** Users' executions that run at once, all keys together; the rest wait in a queue. */
  maxRunningQueries: number;
  /** One key's executions that run at once. */
  maxRunningQueriesPerKey: number;
  /** One key's executions waiting at once; beyond, a submit is refused (429). */
  maxQueuedQueriesPerKey: number;
  /** A user's execution is interrupted (and fails) after this many seconds. */
  queryTimeoutSeconds: number;
  /** Writes of a table whose previous version is kept (0: none), and for how many hours. */
  tableVersionsKept: number;
  tableVersionHours: number;
  /** The Postgres wire protocol's listener (src/pgwire); undefined when it is off. */
  pgPort: number | undefined;
  /** Postgres wire connections open at once; more are refused (53300). */
  pgMaxConnections: number;
  /** Certificate and key (PEM files) for TLS on the Postgres wire; both or neither. */
  pgTls: { certFile: string; keyFile: string } | undefined;
  /** A results statement (a page, a sort, a Parquet file) is interrupted after this many seconds. */
  resultsTimeoutSeconds: number;
  /** A kept result's bytes (as JSON) at most; past it, kept truncated as a partial result. */
  maxResultBytes: number;
  /** Bytes of one key's kept results; past it, its oldest results expire. */
  resultStoragePerKey: number;
  /** One key's finished executions kept; past it, its oldest are removed. */
  maxExecutionsPerKey: number;
  /** Free disk space under DATA_DIR that users' results and spills may not take; undefined: decided at start from the disk's size. */
  diskReserveBytes: number | undefined;
  /** DuckDB's max_temp_directory_size; undefined: decided at start from the free space. */
  spillLimitBytes: number | undefined;
  /** Worker threads that check users' SQL (the sandbox). */
  sandboxWorkers: number;
  /** SQL checks that may wait for a worker; more are refused (503). */
  sandboxQueueLimit: number;
  /** How long a SQL check may wait for a worker before it is refused (503). */
  sandboxWaitSeconds: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const HANDLE_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function parseApiKeys(raw: string | undefined): ConfiguredKey[] {
  if (raw === undefined || raw.trim() === '') return [];
  const keys: ConfiguredKey[] = [];
  for (const entry of raw.split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0)
      throw new ConfigError(`API_KEYS entry "${redact(trimmed)}" must look like KEY=HANDLE[:PLAN][:admin]`);
    const key = trimmed.slice(0, eq);
    const [handle = '', ...flags] = trimmed.slice(eq + 1).split(':');
    if (!HANDLE_PATTERN.test(handle)) {
      throw new ConfigError(
        `API_KEYS: handle "${handle}" must start with a lowercase letter, then lowercase letters, digits or _ (at most 63)`,
      );
    }
    if (key.length < 8)
      throw new ConfigError(`API_KEYS: the key for "${handle}" must be at least 8 characters`);
    let plan: Plan = 'free';
    let admin = false;
    for (const flag of flags) {
      if (flag === 'free' || flag === 'premium') plan = flag;
      else if (flag === 'admin') admin = true;
      else
        throw new ConfigError(
          `API_KEYS: unknown flag "${flag}" for "${handle}" (use free, premium or admin)`,
        );
    }
    if (keys.some((k) => k.key === key))
      throw new ConfigError(`API_KEYS: the key for "${handle}" is listed twice`);
    keys.push({ key, handle, plan, admin });
  }
  return keys;
}

function redact(entry: string): string {
  const eq = entry.indexOf('=');
  return eq < 0 ? '…' : `…${entry.slice(eq)}`;
}

function parseRateLimits(raw: string | undefined): Record<Plan, RateLimit> | undefined {
  const text = raw === undefined || raw.trim() === '' ? 'free:600/60,premium:6000/600' : raw.trim();
  if (text === 'off') return undefined;
  const limits: Partial<Record<Plan, RateLimit>> = {};
  for (const entry of text.split(',')) {
    const match = /^\s*(free|premium):(\d+)\/(\d+)\s*$/.exec(entry);
    if (!match)
      throw new ConfigError(
        `RATE_LIMITS entry "${entry}" must look like PLAN:READS/WRITES, or the whole value "off"`,
      );
    const [, plan, reads, writes] = match as unknown as [string, Plan, string, string];
    limits[plan] = { readsPerMinute: Number(reads), writesPerMinute: Number(writes) };
  }
  if (!limits.free || !limits.premium)
    throw new ConfigError('RATE_LIMITS must give limits for both free and premium');
  return limits as Record<Plan, RateLimit>;
}

function parseAuthFailureLimit(raw: string | undefined): number | undefined {
  const text = raw?.trim() || '30';
  if (text === 'off') return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 1_000_000)
    throw new ConfigError(
      `AUTH_FAILURE_LIMIT must be a whole number of failures per minute from 1 to 1000000, or off, got "${raw}"`,
    );
  return Number(text);
}

function parseBaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http or https URL, got "${raw}"`);
  }
  if (url.search || url.hash) throw new ConfigError('PUBLIC_BASE_URL must not carry a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

function demoData(raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase() || 'on';
  if (value !== 'on' && value !== 'off') throw new ConfigError(`DEMO_DATA must be on or off, got "${raw}"`);
  return value === 'on';
}

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A size in bytes, written as a whole number of bytes or with a unit as DuckDB takes it (`512MB`, `2GiB`). */
function byteSize(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const match = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?$/i.exec(raw);
  if (!match)
    throw new ConfigError(`${name} must be a size such as 500MB, 10GB or a number of bytes, got "${raw}"`);
  const bytes = Math.floor(Number(match[1]) * (SIZE_UNITS[(match[2] ?? 'b').toLowerCase()] ?? 1));
  if (!Number.isSafeInteger(bytes) || bytes < min)
    throw new ConfigError(`${name} must be at least ${min} bytes, got "${raw}"`);
  return bytes;
}

/** A size as DuckDB's memory_limit takes it: a number and a unit (`512MB`, `2GiB`). */
function memoryLimit(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (!/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(value))
    throw new ConfigError(`DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 4GB, got "${raw}"`);
  return value;
}

function pgPort(raw: string | undefined): number | undefined {
  const text = raw?.trim() || '5433';
  if (text === 'off') return undefined;
  if (!/^\d+$/.test(text) || Number(text) > 65535)
    throw new ConfigError(`PG_PORT must be a port number from 0 to 65535, or off, got "${raw}"`);
  return Number(text);
}

function pgTls(env: Env, cwd: string): Config['pgTls'] {
  const cert = env.PG_TLS_CERT?.trim();
  const key = env.PG_TLS_KEY?.trim();
  if (!cert && !key) return undefined;
  if (!cert || !key)
    throw new ConfigError('PG_TLS_CERT and PG_TLS_KEY go together: give both files, or neither');
  return { certFile: path.resolve(cwd, cert), keyFile: path.resolve(cwd, key) };
}

/**
 * One worker thread checks users' SQL unless set: on the 2-core machine this runs on, under 8
 * clients sending 64 KiB texts, a second one answered about as many checks (median 3.9/s
 * against 3.8/s) and made /health's p99 worse (median 98 ms against 53, 10 paired runs at load
 * 6–14; bench/sandbox-load.ts, BENCHMARKS.md).
 */
const DEFAULT_SANDBOX_WORKERS = 1;

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const host = env.HOST?.trim() || '127.0.0.1';
  const logLevel = env.LOG_LEVEL?.trim() || 'info';
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const queriesDir = env.QUERIES_DIR?.trim();
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host,
    dataDir: path.resolve(cwd, env.DATA_DIR?.trim() || './data'),
    publicBaseUrl: parseBaseUrl(env.PUBLIC_BASE_URL),
    apiKeys: parseApiKeys(env.API_KEYS),
    refreshIntervalSeconds: integer(env, 'REFRESH_INTERVAL_SECONDS', 900, 1),
    maxUploadBytes: integer(env, 'MAX_UPLOAD_BYTES', 200_000_000, 1),
    maxDatapointsPerRequest: integer(env, 'MAX_DATAPOINTS_PER_REQUEST', 250_000, 1),
    maxResultRows: integer(env, 'MAX_RESULT_ROWS', 10_000_000, 1),
    resultRetentionHours: integer(env, 'RESULT_RETENTION_HOURS', 168, 1),
    rateLimits: parseRateLimits(env.RATE_LIMITS),
    authFailureLimit: parseAuthFailureLimit(env.AUTH_FAILURE_LIMIT),
    queriesDir: queriesDir ? path.resolve(cwd, queriesDir) : undefined,
    logLevel,
    demoData: demoData(env.DEMO_DATA),
    duckdbMemoryLimit: memoryLimit(env.DUCKDB_MEMORY_LIMIT),
    maxRunningQueries: integer(env, 'MAX_RUNNING_QUERIES', 8, 1, 64),
    maxRunningQueriesPerKey: integer(env, 'MAX_RUNNING_QUERIES_PER_KEY', 2, 1, 64),
    maxQueuedQueriesPerKey: integer(env, 'MAX_QUEUED_QUERIES_PER_KEY', 20, 0, 100_000),
    queryTimeoutSeconds: integer(env, 'QUERY_TIMEOUT_SECONDS', 1800, 1, 7 * 86_400),
    tableVersionsKept: integer(env, 'TABLE_VERSIONS_KEPT', 1, 0, 100),
    tableVersionHours: integer(env, 'TABLE_VERSION_HOURS', 168, 1, 100 * 365 * 24),
    resultsTimeoutSeconds: integer(env, 'RESULTS_TIMEOUT_SECONDS', 120, 1, 86_400),
    pgPort: pgPort(env.PG_PORT),
    pgMaxConnections: integer(env, 'PG_MAX_CONNECTIONS', 100, 1, 100_000),
    pgTls: pgTls(env, cwd),
    ...storageLimits(env),
    sandboxWorkers: integer(env, 'SANDBOX_WORKERS', DEFAULT_SANDBOX_WORKERS, 1, 16),
    sandboxQueueLimit: integer(env, 'SANDBOX_QUEUE_LIMIT', 64, 1, 10_000),
    sandboxWaitSeconds: integer(env, 'SANDBOX_WAIT_SECONDS', 10, 1, 3_600),
  };
}

/** The storage limits of DESIGN §12, each with its default; a key's quota holds at least one result. */
function storageLimits(env: Env) {
  const maxResultBytes = byteSize(env, 'MAX_RESULT_BYTES', 2e9, 1);
  const resultStoragePerKey = byteSize(env, 'RESULT_STORAGE_PER_KEY', 10e9, 1);
  if (maxResultBytes > resultStoragePerKey)
    throw new ConfigError(
      `MAX_RESULT_BYTES (${maxResultBytes}) must not be more than RESULT_STORAGE_PER_KEY (${resultStoragePerKey}): a key's quota holds at least one whole result`,
    );
  const spill = env.SPILL_LIMIT?.trim();
  const reserve = env.DISK_RESERVE?.trim();
  return {
    maxResultBytes,
    resultStoragePerKey,
    maxExecutionsPerKey: integer(env, 'MAX_EXECUTIONS_PER_KEY', 1000, 1),
    diskReserveBytes: !reserve || reserve === 'auto' ? undefined : byteSize(env, 'DISK_RESERVE', 0),
    spillLimitBytes: !spill || spill === 'auto' ? undefined : byteSize(env, 'SPILL_LIMIT', 0),
  };
}

/**
 * The one folder DuckDB may touch files in, besides its own database and spill files: where
 * uploads and inserts stage request bodies before DuckDB's CSV reader loads them. Everything
 * else is closed to SQL (Database.open's `allowedDirectories`, DESIGN §10).
 */
export function duckdbAllowedDirectories(config: Pick<Config, 'dataDir'>): string[] {
  return [path.join(config.dataDir, 'tmp')];
}

/**
 * The DuckDB settings the configuration asks for, as Database.open takes them. Spills (DuckDB's
 * temporary files, in DATA_DIR beside the database) are capped: by SPILL_LIMIT, or by default
 * by half of what the disk had free at start above the reserve, so that neither one sort nor
 * the results stored meanwhile can take the room kept for uploads (DESIGN §12). `freeBytes`
 * is the disk's free space now and `reserveBytes` the reserve, when known.
 */
export function duckdbSettings(
  config: Pick<Config, 'duckdbMemoryLimit'> & Partial<Pick<Config, 'spillLimitBytes'>>,
  freeBytes?: number,
  reserveBytes = 0,
): Record<string, string> {
  const settings: Record<string, string> = {};
  if (config.duckdbMemoryLimit) settings.memory_limit = config.duckdbMemoryLimit;
  const spill =
    config.spillLimitBytes ??
    (freeBytes === undefined ? undefined : Math.max(0, Math.floor((freeBytes - reserveBytes) / 2)));
  if (spill !== undefined) settings.max_temp_directory_size = `${spill}B`;
  return settings;
}

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
  /** Users' executions that run at once; the rest wait in a queue. */
  maxRunningQueries: number;
  /** A user's execution is interrupted (and fails) after this many seconds. */
  queryTimeoutSeconds: number;
  /** Writes of a table whose previous version is kept (0: none), and for how many hours. */
  tableVersionsKept: number;
  tableVersionHours: number;
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

/** A size as DuckDB's memory_limit takes it: a number and a unit (`512MB`, `2GiB`). */
function memoryLimit(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (!/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(value))
    throw new ConfigError(`DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 4GB, got "${raw}"`);
  return value;
}

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
    maxRunningQueries: integer(env, 'MAX_RUNNING_QUERIES', 2, 1, 64),
    queryTimeoutSeconds: integer(env, 'QUERY_TIMEOUT_SECONDS', 1800, 1, 7 * 86_400),
    tableVersionsKept: integer(env, 'TABLE_VERSIONS_KEPT', 1, 0, 100),
    tableVersionHours: integer(env, 'TABLE_VERSION_HOURS', 168, 1, 100 * 365 * 24),
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

/** The DuckDB settings the configuration asks for, as Database.open takes them. */
export function duckdbSettings(config: Pick<Config, 'duckdbMemoryLimit'>): Record<string, string> {
  return config.duckdbMemoryLimit ? { memory_limit: config.duckdbMemoryLimit } : {};
}

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, duckdbSettings, loadConfig } from '../../src/config/config.js';
import { startTestService, tempDir } from '../support/service.js';

/**
 * The configuration's own rules, in-process: every value it refuses, with the message an
 * operator reads, and what it makes of the values it takes. The command line applies the
 * same rules to flags (test/config/command-line.test.ts).
 */

describe('loadConfig refuses a bad value with a message that names it', () => {
  it.each([
    [{ PORT: 'eighty' }, /^PORT must be a whole number, got "eighty"$/],
    [{ PORT: '-1' }, /^PORT must be a whole number, got "-1"$/],
    [{ PORT: '70000' }, /^PORT must be between 0 and 65535, got 70000$/],
    [{ REFRESH_INTERVAL_SECONDS: '0' }, /^REFRESH_INTERVAL_SECONDS must be between 1 and \d+, got 0$/],
    [{ MAX_UPLOAD_BYTES: '-5' }, /^MAX_UPLOAD_BYTES must be a whole number, got "-5"$/],
    [{ MAX_DATAPOINTS_PER_REQUEST: '1e6' }, /^MAX_DATAPOINTS_PER_REQUEST must be a whole number/],
    [{ MAX_RESULT_ROWS: '0' }, /^MAX_RESULT_ROWS must be between 1 and/],
    [{ RESULT_RETENTION_HOURS: 'a week' }, /^RESULT_RETENTION_HOURS must be a whole number/],
    [{ API_KEYS: 'nohandle' }, /^API_KEYS entry "…" must look like KEY=HANDLE\[:PLAN\]\[:admin\]$/],
    [
      { API_KEYS: 'secret-key-123=Bad Handle' },
      /^API_KEYS: handle "Bad Handle" must start with a lowercase letter/,
    ],
    [{ API_KEYS: 'short=alice' }, /^API_KEYS: the key for "alice" must be at least 8 characters$/],
    [{ API_KEYS: 'long-enough-key=alice:gold' }, /^API_KEYS: unknown flag "gold" for "alice"/],
    [{ API_KEYS: 'same-key-0001=alice,same-key-0001=bob' }, /^API_KEYS: the key for "bob" is listed twice$/],
    [{ RATE_LIMITS: 'gold:1/1' }, /^RATE_LIMITS entry "gold:1\/1" must look like PLAN:READS\/WRITES/],
    [{ RATE_LIMITS: 'free:1/1' }, /^RATE_LIMITS must give limits for both free and premium$/],
    [
      { PUBLIC_BASE_URL: 'not a url' },
      /^PUBLIC_BASE_URL must be an absolute http\(s\) URL, got "not a url"$/,
    ],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /^PUBLIC_BASE_URL must be an http or https URL, got "ftp:\/\/x"$/],
    [{ PUBLIC_BASE_URL: 'https://x.org/?a=1' }, /^PUBLIC_BASE_URL must not carry a query or fragment$/],
    [{ DEMO_DATA: 'maybe' }, /^DEMO_DATA must be on or off, got "maybe"$/],
    [
      { DUCKDB_MEMORY_LIMIT: 'lots' },
      /^DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 4GB, got "lots"$/,
    ],
    [{ DUCKDB_MEMORY_LIMIT: '2GB; DROP TABLE x' }, /^DUCKDB_MEMORY_LIMIT must be a size/],
    [
      { AUTH_FAILURE_LIMIT: '0' },
      /^AUTH_FAILURE_LIMIT must be a whole number of failures per minute from 1 to 1000000, or off, got "0"$/,
    ],
    [{ MAX_RUNNING_QUERIES: '0' }, /^MAX_RUNNING_QUERIES must be between 1 and 64, got 0$/],
    [{ QUERY_TIMEOUT_SECONDS: 'soon' }, /^QUERY_TIMEOUT_SECONDS must be a whole number, got "soon"$/],
    [{ MAX_RUNNING_QUERIES_PER_KEY: '0' }, /^MAX_RUNNING_QUERIES_PER_KEY must be between 1 and 64, got 0$/],
    [{ MAX_QUEUED_QUERIES_PER_KEY: '-1' }, /^MAX_QUEUED_QUERIES_PER_KEY must be a whole number/],
    [{ RESULTS_TIMEOUT_SECONDS: '0' }, /^RESULTS_TIMEOUT_SECONDS must be between 1 and 86400, got 0$/],
    [
      { MAX_RESULT_BYTES: 'big' },
      /^MAX_RESULT_BYTES must be a size such as 500MB, 10GB or a number of bytes, got "big"$/,
    ],
    [{ MAX_RESULT_BYTES: '0' }, /^MAX_RESULT_BYTES must be at least 1 bytes, got "0"$/],
    [
      { MAX_RESULT_BYTES: '20GB', RESULT_STORAGE_PER_KEY: '10GB' },
      /^MAX_RESULT_BYTES \(20000000000\) must not be more than RESULT_STORAGE_PER_KEY \(10000000000\)/,
    ],
    [{ DISK_RESERVE: '5 gallons' }, /^DISK_RESERVE must be a size/],
    [{ SPILL_LIMIT: '1e9' }, /^SPILL_LIMIT must be a size/],
    [{ MAX_EXECUTIONS_PER_KEY: '0' }, /^MAX_EXECUTIONS_PER_KEY must be between 1 and/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent$/],
    [{ PG_PORT: 'on' }, /^PG_PORT must be a port number from 0 to 65535, or off, got "on"$/],
    [{ PG_PORT: '65536' }, /^PG_PORT must be a port number from 0 to 65535, or off, got "65536"$/],
    [{ PG_MAX_CONNECTIONS: '0' }, /^PG_MAX_CONNECTIONS must be between 1 and 100000, got 0$/],
    [{ PG_TLS_CERT: 'cert.pem' }, /^PG_TLS_CERT and PG_TLS_KEY go together: give both files, or neither$/],
  ])('%j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never repeats a key in a refusal', () => {
    for (const keys of [
      'very-secret-key-value',
      'very-secret-key-value=Bad Handle',
      'very-secret-key-value=al:x',
    ]) {
      let refusal: unknown;
      try {
        loadConfig({ API_KEYS: keys });
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(ConfigError);
      expect((refusal as ConfigError).message).toMatch(/^API_KEYS/);
      expect((refusal as ConfigError).message).not.toContain('very-secret-key-value');
    }
  });
});

describe('loadConfig takes', () => {
  it('nothing: the documented defaults', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toEqual({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/srv/app/data',
      publicBaseUrl: undefined,
      apiKeys: [],
      refreshIntervalSeconds: 900,
      maxUploadBytes: 200_000_000,
      maxDatapointsPerRequest: 250_000,
      maxResultRows: 10_000_000,
      resultRetentionHours: 168,
      rateLimits: {
        free: { readsPerMinute: 600, writesPerMinute: 60 },
        premium: { readsPerMinute: 6000, writesPerMinute: 600 },
      },
      queriesDir: undefined,
      logLevel: 'info',
      demoData: true,
      duckdbMemoryLimit: undefined,
      authFailureLimit: 30,
      maxRunningQueries: 8,
      maxRunningQueriesPerKey: 2,
      maxQueuedQueriesPerKey: 20,
      queryTimeoutSeconds: 1800,
      tableVersionsKept: 1,
      tableVersionHours: 168,
      pgPort: 5433,
      pgMaxConnections: 100,
      pgTls: undefined,
      resultsTimeoutSeconds: 120,
      maxResultBytes: 2_000_000_000,
      resultStoragePerKey: 10_000_000_000,
      maxExecutionsPerKey: 1000,
      diskReserveBytes: undefined,
      spillLimitBytes: undefined,
      sandboxWorkers: 1,
      sandboxQueueLimit: 64,
      sandboxWaitSeconds: 10,
    });
    expect(duckdbSettings(config)).toEqual({});
    // Spills get half of what the disk has free above the reserve.
    expect(duckdbSettings(config, 10_000_000_000, 2e9)).toEqual({ max_temp_directory_size: '4000000000B' });
    expect(duckdbSettings(config, 1_000_000_000, 2e9)).toEqual({ max_temp_directory_size: '0B' });
  });

  it('every variable, trimmed, with relative directories resolved against the working directory', () => {
    const config = loadConfig(
      {
        PORT: ' 0 ',
        HOST: '0.0.0.0',
        DATA_DIR: 'var/data',
        PUBLIC_BASE_URL: 'https://data.example.org/api/',
        API_KEYS: 'key-of-alice-1=alice, key-of-bob-01=bob:premium:admin,',
        REFRESH_INTERVAL_SECONDS: '60',
        MAX_UPLOAD_BYTES: '1000',
        MAX_DATAPOINTS_PER_REQUEST: '10',
        MAX_RESULT_ROWS: '5',
        RESULT_RETENTION_HOURS: '1',
        RATE_LIMITS: 'free:1/2, premium:3/4',
        QUERIES_DIR: 'queries-extra',
        LOG_LEVEL: 'silent',
        DEMO_DATA: 'OFF',
        DUCKDB_MEMORY_LIMIT: '1GiB',
        AUTH_FAILURE_LIMIT: ' 5 ',
        MAX_RUNNING_QUERIES: '3',
        MAX_RUNNING_QUERIES_PER_KEY: '1',
        MAX_QUEUED_QUERIES_PER_KEY: '0',
        QUERY_TIMEOUT_SECONDS: '60',
        TABLE_VERSIONS_KEPT: '0',
        TABLE_VERSION_HOURS: '2',
        PG_PORT: ' 0 ',
        PG_MAX_CONNECTIONS: '7',
        PG_TLS_CERT: 'tls/cert.pem',
        PG_TLS_KEY: '/etc/key.pem',
        RESULTS_TIMEOUT_SECONDS: '5',
        MAX_RESULT_BYTES: '1.5GB',
        RESULT_STORAGE_PER_KEY: '2GiB',
        MAX_EXECUTIONS_PER_KEY: '10',
        DISK_RESERVE: '500MB',
        SPILL_LIMIT: '4096',
        SANDBOX_WORKERS: '2',
        SANDBOX_QUEUE_LIMIT: '5',
        SANDBOX_WAIT_SECONDS: '3',
      },
      '/srv/app',
    );
    expect(config).toEqual({
      port: 0,
      host: '0.0.0.0',
      dataDir: path.resolve('/srv/app/var/data'),
      publicBaseUrl: 'https://data.example.org/api',
      apiKeys: [
        { key: 'key-of-alice-1', handle: 'alice', plan: 'free', admin: false },
        { key: 'key-of-bob-01', handle: 'bob', plan: 'premium', admin: true },
      ],
      refreshIntervalSeconds: 60,
      maxUploadBytes: 1000,
      maxDatapointsPerRequest: 10,
      maxResultRows: 5,
      resultRetentionHours: 1,
      rateLimits: {
        free: { readsPerMinute: 1, writesPerMinute: 2 },
        premium: { readsPerMinute: 3, writesPerMinute: 4 },
      },
      queriesDir: '/srv/app/queries-extra',
      logLevel: 'silent',
      demoData: false,
      duckdbMemoryLimit: '1GiB',
      authFailureLimit: 5,
      maxRunningQueries: 3,
      maxRunningQueriesPerKey: 1,
      maxQueuedQueriesPerKey: 0,
      queryTimeoutSeconds: 60,
      tableVersionsKept: 0,
      tableVersionHours: 2,
      pgPort: 0,
      pgMaxConnections: 7,
      pgTls: { certFile: '/srv/app/tls/cert.pem', keyFile: '/etc/key.pem' },
      resultsTimeoutSeconds: 5,
      maxResultBytes: 1_500_000_000,
      resultStoragePerKey: 2 * 2 ** 30,
      maxExecutionsPerKey: 10,
      diskReserveBytes: 500_000_000,
      spillLimitBytes: 4096,
      sandboxWorkers: 2,
      sandboxQueueLimit: 5,
      sandboxWaitSeconds: 3,
    });
    expect(duckdbSettings(config, 1e12)).toEqual({ memory_limit: '1GiB', max_temp_directory_size: '4096B' });
    expect(loadConfig({ PG_PORT: 'off' }).pgPort).toBeUndefined();
    expect(loadConfig({ RATE_LIMITS: 'off' }).rateLimits).toBeUndefined();
    expect(loadConfig({ AUTH_FAILURE_LIMIT: 'off' }).authFailureLimit).toBeUndefined();
  });
});

describe('DUCKDB_MEMORY_LIMIT', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("is DuckDB's memory_limit in a running service", async () => {
    const memoryLimit = async (env: Record<string, string>) => {
      const dir = tempDir('memory-limit-');
      dirs.push(dir);
      const service = await startTestService(env, dir);
      try {
        const [row] = await service.database.read((session) =>
          session.all<{ limit: string }>("SELECT current_setting('memory_limit') AS limit"),
        );
        return row?.limit;
      } finally {
        await service.stop();
      }
    };
    expect(await memoryLimit({ DUCKDB_MEMORY_LIMIT: '512MB' })).toBe('488.2 MiB');
    expect(await memoryLimit({ DUCKDB_MEMORY_LIMIT: '1GiB' })).toBe('1.0 GiB');
    // Unset: DuckDB's own default, a share of the machine's memory.
    expect(await memoryLimit({})).toMatch(/^\d+(\.\d+)? GiB$/);
  });
});

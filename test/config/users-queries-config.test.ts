import { describe, expect, it } from 'vitest';
import { environmentWithFlags } from '../../src/cli/config-flags.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/**
 * MAX_RUNNING_QUERIES, QUERY_TIMEOUT_SECONDS and the sandbox's SANDBOX_*: defaults, checks at
 * start, and their flags.
 */
describe("the configuration of users' executions", () => {
  it('defaults to 8 at once, 2 of one key, 20 waiting per key, and 30 minutes, as Dune', () => {
    const config = loadConfig({});
    expect(config.maxRunningQueries).toBe(8);
    expect(config.maxRunningQueriesPerKey).toBe(2);
    expect(config.maxQueuedQueriesPerKey).toBe(20);
    expect(config.queryTimeoutSeconds).toBe(1800);
  });

  it("checks users' SQL on one worker thread, with at most 64 checks waiting, each at most 10 s", () => {
    const config = loadConfig({});
    expect(config.sandboxWorkers).toBe(1);
    expect(config.sandboxQueueLimit).toBe(64);
    expect(config.sandboxWaitSeconds).toBe(10);
  });

  it.each([
    ['MAX_RUNNING_QUERIES', '0', /MAX_RUNNING_QUERIES must be between 1 and 64, got 0/],
    ['MAX_RUNNING_QUERIES', 'two', /MAX_RUNNING_QUERIES must be a whole number, got "two"/],
    ['MAX_RUNNING_QUERIES', '65', /between 1 and 64/],
    ['QUERY_TIMEOUT_SECONDS', '0', /QUERY_TIMEOUT_SECONDS must be between 1 and 604800, got 0/],
    ['QUERY_TIMEOUT_SECONDS', '1.5', /QUERY_TIMEOUT_SECONDS must be a whole number/],
    ['SANDBOX_WORKERS', '0', /SANDBOX_WORKERS must be between 1 and 16, got 0/],
    ['SANDBOX_WORKERS', '17', /SANDBOX_WORKERS must be between 1 and 16, got 17/],
    ['SANDBOX_QUEUE_LIMIT', '0', /SANDBOX_QUEUE_LIMIT must be between 1 and 10000, got 0/],
    ['SANDBOX_WAIT_SECONDS', 'soon', /SANDBOX_WAIT_SECONDS must be a whole number, got "soon"/],
  ])('refuses %s=%s at start', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('takes each from its flag', () => {
    const env = environmentWithFlags({
      maxRunningQueries: '5',
      maxRunningQueriesPerKey: '3',
      maxQueuedQueriesPerKey: '7',
      queryTimeoutSeconds: '60',
      resultsTimeoutSeconds: '9',
      maxResultBytes: '1GB',
      resultStoragePerKey: '3GB',
      maxExecutionsPerKey: '50',
      diskReserve: '1GB',
      spillLimit: '2GB',
      sandboxWorkers: '2',
      sandboxQueueLimit: '8',
      sandboxWaitSeconds: '3',
    });
    const config = loadConfig(env);
    expect(config).toMatchObject({
      maxRunningQueries: 5,
      maxRunningQueriesPerKey: 3,
      maxQueuedQueriesPerKey: 7,
      queryTimeoutSeconds: 60,
      resultsTimeoutSeconds: 9,
      maxResultBytes: 1e9,
      resultStoragePerKey: 3e9,
      maxExecutionsPerKey: 50,
      diskReserveBytes: 1e9,
      spillLimitBytes: 2e9,
      sandboxWorkers: 2,
      sandboxQueueLimit: 8,
      sandboxWaitSeconds: 3,
    });
  });
});

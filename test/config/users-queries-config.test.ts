import { describe, expect, it } from 'vitest';
import { environmentWithFlags } from '../../src/cli/config-flags.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/** MAX_RUNNING_QUERIES and QUERY_TIMEOUT_SECONDS: defaults, checks at start, and their flags. */
describe("the configuration of users' executions", () => {
  it('defaults to 8 at once, 2 of one key, 20 waiting per key, and 30 minutes, as Dune', () => {
    const config = loadConfig({});
    expect(config.maxRunningQueries).toBe(8);
    expect(config.maxRunningQueriesPerKey).toBe(2);
    expect(config.maxQueuedQueriesPerKey).toBe(20);
    expect(config.queryTimeoutSeconds).toBe(1800);
  });

  it.each([
    ['MAX_RUNNING_QUERIES', '0', /MAX_RUNNING_QUERIES must be between 1 and 64, got 0/],
    ['MAX_RUNNING_QUERIES', 'two', /MAX_RUNNING_QUERIES must be a whole number, got "two"/],
    ['MAX_RUNNING_QUERIES', '65', /between 1 and 64/],
    ['QUERY_TIMEOUT_SECONDS', '0', /QUERY_TIMEOUT_SECONDS must be between 1 and 604800, got 0/],
    ['QUERY_TIMEOUT_SECONDS', '1.5', /QUERY_TIMEOUT_SECONDS must be a whole number/],
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
    });
  });
});

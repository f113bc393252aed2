import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { requestFrom } from '../support/request-from.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * AUTH_FAILURE_LIMIT: failed authentications per minute per client address. The client's
 * address is chosen with `localAddress` (Linux routes all of 127.0.0.0/8 to loopback), so
 * each test is a client of its own.
 */

const LIMIT = 5;
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ AUTH_FAILURE_LIMIT: String(LIMIT) });
});
afterAll(() => service.stop());

/** GET `path` from the client address `from` (a new connection each time). */
const get = (from: string, path: string, key?: string) => requestFrom(`${service.url}${path}`, { from, key });

const wrongKey = (i: number) => `not-a-key-${String(i).padStart(8, '0')}`;

describe('failed authentications per client address', () => {
  it('answers 401 up to the limit, then 429 with Retry-After, also for a missing key', async () => {
    const from = '127.0.0.11';
    for (let i = 0; i < LIMIT; i++) expect((await get(from, '/v1/tables', wrongKey(i))).status).toBe(401);
    const refused = await get(from, '/v1/tables', wrongKey(LIMIT));
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(JSON.parse(refused.body)).toEqual({
      error: `too many failed authentications from this address: at most ${LIMIT} per minute; retry in ${retryAfter} s`,
    });
    expect((await get(from, '/api/v1/account')).status).toBe(429);
  });

  it('does not check the keys of a blocked address: a right guess is refused like a wrong one', async () => {
    const from = '127.0.0.12';
    for (let i = 0; i <= LIMIT; i++) await get(from, '/v1/tables', wrongKey(i));
    // bob's key never authenticated from this address.
    const guess = await get(from, '/v1/account', KEYS.bob);
    expect(guess.status).toBe(429);
    expect(guess.body).not.toContain('bob');
  });

  it('keeps serving a key that authenticated from the address before it was blocked', async () => {
    const from = '127.0.0.13';
    expect((await get(from, '/v1/account', KEYS.carol)).status).toBe(200);
    for (let i = 0; i <= LIMIT; i++) await get(from, '/v1/tables', wrongKey(i));
    expect((await get(from, '/v1/tables', wrongKey(99))).status).toBe(429);
    const served = await get(from, '/v1/account', KEYS.carol);
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toMatchObject({ handle: 'carol' });
  });

  it('counts no successful request, and limits each address apart', async () => {
    const from = '127.0.0.14';
    for (let i = 0; i < 50; i++) expect((await get(from, '/v1/tables', KEYS.alice)).status).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await get(from, '/v1/tables', wrongKey(i))).status).toBe(401);
    expect((await get(from, '/v1/tables', wrongKey(LIMIT))).status).toBe(429);
    // Another address has its own count.
    expect((await get('127.0.0.15', '/v1/tables', wrongKey(0))).status).toBe(401);
  });
});

describe('AUTH_FAILURE_LIMIT', () => {
  it('is 30 by default, off when "off", and refuses anything but a positive whole number', () => {
    expect(loadConfig({}).authFailureLimit).toBe(30);
    expect(loadConfig({ AUTH_FAILURE_LIMIT: 'off' }).authFailureLimit).toBeUndefined();
    expect(loadConfig({ AUTH_FAILURE_LIMIT: '7' }).authFailureLimit).toBe(7);
    for (const bad of ['0', '-1', 'lots', '1.5', '30/60'])
      expect(() => loadConfig({ AUTH_FAILURE_LIMIT: bad })).toThrow(
        /AUTH_FAILURE_LIMIT must be a whole number/,
      );
  });

  it('off: wrong keys are answered 401 however many', async () => {
    const open = await startTestService({ AUTH_FAILURE_LIMIT: 'off' });
    try {
      for (let i = 0; i < 40; i++)
        expect((await open.request('/v1/tables', { key: wrongKey(i) })).status).toBe(401);
    } finally {
      await open.stop();
    }
  });
});

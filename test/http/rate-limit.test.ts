import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, TEST_API_KEYS, type TestService, uploadBody } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/** RATE_LIMITS per key and plan, reads and writes counted apart (DESIGN §2–3). */

let service: TestService;
/** Two keys of one account. */
const DAVE_KEYS = ['dave-free-key-0001', 'dave-free-key-0002'] as const;

beforeAll(async () => {
  service = await startTestService({
    RATE_LIMITS: 'free:5/3,premium:8/4',
    API_KEYS: `${TEST_API_KEYS},${DAVE_KEYS[0]}=dave,${DAVE_KEYS[1]}=dave`,
  });
});
afterAll(async () => {
  await service.stop();
});

const read = (key: string, path = '/v1/account') => service.request(path, { key });

describe('rate limits', () => {
  it('counts reads per key, says how many remain, and answers 429 with Retry-After past the limit', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await read(KEYS.alice, i % 2 === 0 ? '/v1/account' : '/api/v1/tables');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('5');
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
    }
    const refused = await read(KEYS.alice);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(await refused.json()).toEqual({
      error: `rate limit exceeded: this key may make 5 read requests per minute on the free plan; retry in ${retryAfter} s`,
    });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('keeps a separate bucket for writes: a key out of reads can still write, and the other way round', async () => {
    const calls = tableCalls(service);
    const schema = [{ name: 'x', type: 'integer' }];
    expect((await calls.create(KEYS.alice, { namespace: 'alice', table_name: 'w1', schema })).status).toBe(
      201,
    );
    expect((await calls.insert(KEYS.alice, 'alice.w1', 'x\n1\n')).status).toBe(200);
    expect((await calls.clear(KEYS.alice, 'alice.w1')).status).toBe(200);
    // The fourth write (a delete) is over the free plan's 3 per minute.
    const refused = await calls.remove(KEYS.alice, 'alice.w1');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(
      /^rate limit exceeded: this key may make 3 write requests per minute on the free plan/,
    );
    expect(await calls.count('alice.w1')).toBe(0);
    // Upload is a write too; reads of alice are still exhausted from the test before.
    const upload = await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'u', data: 'x\n1\n' }),
      key: KEYS.alice,
    });
    expect(upload.status).toBe(429);
  });

  it('limits each key on its own, by its plan', async () => {
    for (let i = 0; i < 5; i++) expect((await read(KEYS.carol)).status).toBe(200);
    expect((await read(KEYS.carol)).status).toBe(429);
    for (let i = 0; i < 8; i++) {
      const response = await read(KEYS.bob, '/v1/tables');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('8');
    }
    expect((await read(KEYS.bob)).status).toBe(429);
  });

  it('counts two keys of one account apart: the limit is per key', async () => {
    for (let i = 0; i < 5; i++) expect((await read(DAVE_KEYS[0])).status).toBe(200);
    expect((await read(DAVE_KEYS[0])).status).toBe(429);
    const other = await read(DAVE_KEYS[1]);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('answers a write refused with its body unread, and the connection stays usable for the client', async () => {
    const calls = tableCalls(service);
    for (let i = 0; i < 4; i++) {
      const answer = await calls.create(KEYS.bob, {
        namespace: 'bob',
        table_name: 'w',
        schema: [{ name: 'x', type: 'varchar' }],
      });
      expect(answer.status).toBe(i === 0 ? 201 : 200);
    }
    const refused = await calls.insert(KEYS.bob, 'bob.w', `x\n${'value\n'.repeat(200_000)}`);
    expect(refused.status).toBe(429);
    expect(await calls.count('bob.w')).toBe(0);
  });

  it('does not count requests without a valid key: they stay 401', async () => {
    for (let i = 0; i < 10; i++) {
      const response = await read('wrong-key-00000000');
      expect(response.status).toBe(401);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('leaves the settings page and /health alone', async () => {
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
    expect((await fetch(`${service.url}/settings/data`)).status).toBe(200);
  });
});

describe('RATE_LIMITS=off', () => {
  let unlimited: TestService;
  beforeAll(async () => {
    unlimited = await startTestService({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await unlimited.stop();
  });

  it('disables the limits', async () => {
    for (let i = 0; i < 30; i++) {
      const response = await unlimited.request('/v1/account', { key: KEYS.alice });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});

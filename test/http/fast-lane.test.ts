import fs from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type RunningService, startService } from '../../src/service.js';
import { type RawAnswer, type RequestFromOptions, requestFrom } from '../support/request-from.js';
import { KEYS, TEST_API_KEYS, tempDir } from '../support/service.js';

/**
 * The fast lane (src/http/fast-lane.ts) answers the GETs of the lane-eligible routes (the
 * metrics endpoint, the query and execution results) in front of express. These tests check
 * that it is taken for the plain request, and that what it answers, counts and logs is exactly
 * what express does for the same request: express's answer is had by sending the key as
 * `api_key`, which the lane leaves to express.
 */

interface Started {
  service: RunningService;
  dataDir: string;
  /** Every log line written so far, parsed. */
  lines: Record<string, unknown>[];
}

/**
 * A service on the demo data set, once the metrics query has completed. Waited for on
 * `/metrics`, which no key and no limit touches: polling the endpoint with a key would use
 * that key's reads (on a loaded machine the query takes long enough for the polls to exhaust
 * a limit of 6 a minute, after which every poll was a 429 counted under the route `unmatched`).
 */
async function start(env: Record<string, string>, level = 'info'): Promise<Started> {
  const dataDir = tempDir('fast-lane-');
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  const config = loadConfig({
    PORT: '0',
    PG_PORT: 'off',
    DATA_DIR: dataDir,
    API_KEYS: TEST_API_KEYS,
    DEMO_DATA: 'on',
    ...env,
  });
  const service = await startService(config, logger);
  // The demo data set is loaded at start and the metrics query runs at once.
  const completed = { query_id: '3693850', state: 'QUERY_STATE_COMPLETED' };
  for (const until = Date.now() + 60_000; ; ) {
    if ((await sample(service, 'refresh_duration_seconds_count', completed)) > 0) break;
    if (Date.now() > until) throw new Error('the metrics query did not complete within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { service, dataDir, lines };
}

async function stop(started: Started | undefined) {
  await started?.service.close();
  if (started) fs.rmSync(started.dataDir, { recursive: true, force: true });
}

type Answer = RawAnswer;

const get = (service: RunningService, urlPath: string, options: RequestFromOptions = {}) =>
  requestFrom(`${service.url}${urlPath}`, options);

/** The same request through express: the key as `api_key`, which the lane never takes. */
const viaExpress = (service: RunningService, urlPath: string, key: string, from?: string) =>
  get(service, `${urlPath}${urlPath.includes('?') ? '&' : '?'}api_key=${key}`, { from });

/** A sample of /metrics: the sum of the series of `name` whose labels include `labels`. */
async function sample(service: RunningService, name: string, labels: Record<string, string> = {}) {
  const text = (await get(service, '/metrics')).body;
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const given = match[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => given.includes(`${k}="${v}"`))) sum += Number(match[3]);
  }
  return sum;
}

const laneCount = (service: RunningService) => sample(service, 'http_fast_lane_requests_total');

/** What an answer shows a client, without what differs between any two answers (Date). */
function shown(answer: Answer) {
  const { date: _date, ...headers } = answer.headers;
  return { status: answer.status, headers, body: answer.body };
}

/**
 * Two answers of one key's bucket, `later` counted after `earlier`, as `shown` gives them,
 * but for the seconds until the bucket's minute ends (X-RateLimit-Reset, Retry-After, and the
 * 429's "retry in N s"): those count down, so they may differ by the whole seconds that
 * passed between the two counts, `elapsedMs` measured around both requests. Checked to be
 * within that window, then set alike.
 */
function shownAtOneMoment(
  earlier: Answer,
  later: Answer,
  elapsedMs: number,
): [ReturnType<typeof shown>, ReturnType<typeof shown>] {
  const reset = (answer: Answer) => Number(answer.headers['x-ratelimit-reset']);
  const drift = reset(earlier) - reset(later);
  expect(drift, 'X-RateLimit-Reset counts down').toBeGreaterThanOrEqual(0);
  expect(drift, `X-RateLimit-Reset after ${elapsedMs} ms`).toBeLessThanOrEqual(Math.ceil(elapsedMs / 1000));
  const atEarlier = (answer: Answer) => {
    const { headers, body, ...rest } = shown(answer);
    const seconds = String(reset(earlier));
    return {
      ...rest,
      headers: {
        ...headers,
        'x-ratelimit-reset': seconds,
        ...(headers['retry-after'] === undefined ? {} : { 'retry-after': seconds }),
      },
      body: body.replace(/retry in \d+ s/, `retry in ${seconds} s`),
    };
  };
  return [atEarlier(earlier), atEarlier(later)];
}

const PAGES = [
  '/v1/restaking/avs-stats?queryID=3693850',
  '/api/v1/restaking/avs-stats?queryID=3693850&limit=3',
  `/v1/restaking/avs-stats?queryID=3693850&filters=${encodeURIComponent('num_operators > 5 AND total_TVL > 0')}&sort_by=${encodeURIComponent('num_stakers desc')}&limit=10&columns=avs_name,num_stakers,total_TVL`,
  '/v1/restaking/avs-stats?queryID=3693850&columns=avs_name&offset=38',
  // Refusals: a parameter, the query id, a missing query id.
  '/v1/restaking/avs-stats?queryID=3693850&limit=ten',
  '/v1/restaking/avs-stats?queryID=1',
  '/api/v1/restaking/avs-stats',
  '/v1/restaking/avs-stats?queryID=3693850&filters=nope%20%3E%201',
];

describe('the metrics endpoint in front of express', () => {
  let started: Started;
  beforeAll(async () => {
    started = await start({ RATE_LIMITS: 'free:1000/100,premium:1000/100' });
  }, 90_000);
  afterAll(() => stop(started));

  /** Asks each page in the lane and then through express, and expects the same answer. */
  async function expectAlike(service: RunningService, pages: string[]) {
    for (const page of pages) {
      const before = await laneCount(service);
      const sentAt = performance.now();
      const lane = await get(service, page, { key: KEYS.carol });
      expect(await laneCount(service), page).toBe(before + 1);
      const express = await viaExpress(service, page, KEYS.carol);
      const elapsed = performance.now() - sentAt;
      expect(await laneCount(service), page).toBe(before + 1);
      // One read more of carol's counted in between.
      const remaining = Number(lane.headers['x-ratelimit-remaining']);
      expect(express.headers['x-ratelimit-remaining'], page).toBe(String(remaining - 1));
      const same = (answer: ReturnType<typeof shown>) => ({
        ...answer,
        headers: { ...answer.headers, 'x-ratelimit-remaining': 'n' },
      });
      const [laneShown, expressShown] = shownAtOneMoment(lane, express, elapsed);
      expect(same(laneShown), page).toEqual(same(expressShown));
      expect(lane.headers['content-length'], page).toBe(String(Buffer.byteLength(lane.body)));
    }
  }

  it('answers each page, and each refusal, exactly as express does', async () => {
    await expectAlike(started.service, PAGES);
    for (const page of PAGES) {
      const lane = await get(started.service, page, { key: KEYS.carol });
      expect(lane.headers['content-type'], page).toBe('application/json; charset=utf-8');
    }
  });

  it('answers the query and execution results as express does, JSON and CSV', async () => {
    const { service } = started;
    const latest = JSON.parse(
      (await get(service, '/v1/query/3693850/results?limit=1', { key: KEYS.carol })).body,
    );
    const id = latest.execution_id as string;
    expect(id).toMatch(/^[0-9A-Z]{26}$/);
    await expectAlike(service, [
      '/v1/query/3693850/results?limit=2',
      '/api/v1/query/03693850/results/csv?limit=3&offset=1',
      `/v1/execution/${id}/results?columns=avs_name&limit=2`,
      `/api/v1/execution/${id}/results/csv?sort_by=avs_name%20desc&limit=4`,
      // Refusals: an id that is not one, a query or execution nobody has, a parameter.
      '/v1/query/abc/results',
      '/v1/query/12345/results/csv',
      '/v1/execution/01ARZ3NDEKTSV4RRFFQ69G5FAV/results',
      `/v1/execution/${id}/results?limit=-1`,
    ]);
  });

  it('answers a key of no account as express does, counting it as a failed authentication', async () => {
    const { service } = started;
    const page = '/v1/restaking/avs-stats?queryID=3693850&limit=1';
    const before = await laneCount(service);
    const lane = await get(service, page, { key: 'no-such-key-000001' });
    expect(await laneCount(service)).toBe(before + 1);
    // The same request in another spelling of the prefix, which the lane leaves to express.
    const express = await get(service, page.replace('/v1/', '/V1/'), { key: 'no-such-key-000001' });
    expect(await laneCount(service)).toBe(before + 1);
    expect(lane.status).toBe(401);
    expect(shown(lane)).toEqual(shown(express));
  });

  it('draws samples in the lane, every request a new one, with the same envelope as express', async () => {
    const { service } = started;
    const page = '/v1/restaking/avs-stats?queryID=3693850&sample_count=5&columns=avs_name';
    const before = await laneCount(service);
    const names = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const lane = JSON.parse((await get(service, page, { key: KEYS.bob })).body);
      expect(lane.result.rows).toHaveLength(5);
      names.add(lane.result.rows.map((row: { avs_name: string }) => row.avs_name).join());
    }
    expect(await laneCount(service)).toBe(before + 8);
    expect(names.size).toBeGreaterThan(1);
    const express = JSON.parse((await viaExpress(service, page, KEYS.bob)).body);
    const lane = JSON.parse((await get(service, page, { key: KEYS.bob })).body);
    const withoutRows = (envelope: { result: { rows: unknown[]; metadata: Record<string, unknown> } }) => ({
      ...envelope,
      result: { metadata: { ...envelope.result.metadata, result_set_bytes: 0 } },
    });
    expect(withoutRows(lane)).toEqual(withoutRows(express));
  });

  it('leaves to express, untouched, whatever it could not answer alike', async () => {
    const { service } = started;
    const page = '/v1/restaking/avs-stats?queryID=3693850&limit=1';
    const before = await laneCount(service);
    const cases: [string, Promise<Answer>, number][] = [
      ['path in capitals', get(service, page.replace('/v1/', '/V1/'), { key: KEYS.bob }), 200],
      ['trailing slash', get(service, page.replace('avs-stats', 'avs-stats/'), { key: KEYS.bob }), 200],
      ['HEAD', get(service, page, { key: KEYS.bob, method: 'HEAD' }), 200],
      ['a body', get(service, page, { key: KEYS.bob, body: 'x' }), 200],
      ['api_key', viaExpress(service, page, KEYS.bob), 200],
      // The name percent-encoded is still the key (URLSearchParams decodes it): never cached.
      ['api%5Fkey', get(service, `${page}&api%5Fkey=${KEYS.bob}`, { key: KEYS.bob }), 200],
      ['no key', get(service, page), 401],
      ['POST', get(service, page, { key: KEYS.bob, method: 'POST' }), 405],
      // The results routes' paths: express decodes escapes, and matches literals in one case only.
      ['a %-escape', get(service, '/v1/query/%33693850/results?limit=1', { key: KEYS.bob }), 200],
      ['trailing slash', get(service, '/v1/query/3693850/results/?limit=1', { key: KEYS.bob }), 200],
      ['a literal in capitals', get(service, '/v1/Query/3693850/results', { key: KEYS.bob }), 404],
      ['an empty id', get(service, '/v1/query//results', { key: KEYS.bob }), 404],
    ];
    for (const [name, answer, status] of cases)
      expect((await answer).status, `${name}: ${(await answer).body}`).toBe(status);
    expect(await laneCount(service)).toBe(before);
  });

  it('logs one line per request and counts it under the route, in the lane as through express', async () => {
    const { service, lines } = started;
    const route = { route: '/v1/restaking/avs-stats' };
    const ok = await sample(service, 'http_requests_total', { ...route, status: '200' });
    const refused = await sample(service, 'http_requests_total', { ...route, status: '400' });
    const seconds = await sample(service, 'http_request_duration_seconds_count', route);
    const logged = lines.length;
    await get(service, '/api/v1/restaking/avs-stats?queryID=3693850&limit=2', { key: KEYS.alice });
    await viaExpress(service, '/api/v1/restaking/avs-stats?queryID=3693850&limit=2', KEYS.alice);
    await get(service, '/v1/restaking/avs-stats?queryID=3693850&limit=0', { key: KEYS.alice });
    await viaExpress(service, '/v1/restaking/avs-stats?queryID=3693850&limit=0', KEYS.alice);
    expect(await sample(service, 'http_requests_total', { ...route, status: '200' })).toBe(ok + 2);
    expect(await sample(service, 'http_requests_total', { ...route, status: '400' })).toBe(refused + 2);
    expect(await sample(service, 'http_request_duration_seconds_count', route)).toBe(seconds + 4);
    const requests = lines.slice(logged).filter((line) => line.msg === 'request' && line.path !== '/metrics');
    expect(
      requests.map(({ path: p, status, handle, method }) => ({ path: p, status, handle, method })),
    ).toEqual([
      { path: '/api/v1/restaking/avs-stats', status: 200, handle: 'alice', method: 'GET' },
      { path: '/api/v1/restaking/avs-stats', status: 200, handle: 'alice', method: 'GET' },
      { path: '/v1/restaking/avs-stats', status: 400, handle: 'alice', method: 'GET' },
      { path: '/v1/restaking/avs-stats', status: 400, handle: 'alice', method: 'GET' },
    ]);
    for (const line of requests) expect(typeof line.ms).toBe('number');
    expect(JSON.stringify(lines)).not.toContain(KEYS.alice);
  });

  it('counts the datapoints it serves', async () => {
    const { service } = started;
    const before = await sample(service, 'datapoints_served_total', { format: 'json' });
    await get(service, '/v1/restaking/avs-stats?queryID=3693850&limit=4&columns=avs_name,num_stakers', {
      key: KEYS.bob,
    });
    expect(await sample(service, 'datapoints_served_total', { format: 'json' })).toBe(before + 8);
  });
});

describe('the limits, in the lane as through express', () => {
  let started: Started;
  beforeAll(async () => {
    started = await start({ RATE_LIMITS: 'free:6/6,premium:6/6', AUTH_FAILURE_LIMIT: '3' });
  }, 90_000);
  afterAll(() => stop(started));

  it('counts the lane and express in one bucket per key, and refuses past the limit alike', async () => {
    const { service } = started;
    const page = '/v1/restaking/avs-stats?queryID=3693850&limit=1';
    const from = '127.0.0.20';
    // The start-up wait read /metrics only: every read of alice's is left.
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      remaining.push(
        (await get(service, page, { key: KEYS.alice, from })).headers['x-ratelimit-remaining'] as string,
      );
      remaining.push(
        (await viaExpress(service, page, KEYS.alice, from)).headers['x-ratelimit-remaining'] as string,
      );
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    const before = await laneCount(service);
    const refusedBefore = await sample(service, 'http_requests_total', { route: 'unmatched', status: '429' });
    const sentAt = performance.now();
    const lane = await get(service, page, { key: KEYS.alice, from });
    expect(await laneCount(service)).toBe(before + 1);
    const express = await viaExpress(service, page, KEYS.alice, from);
    const elapsed = performance.now() - sentAt;
    expect(lane.status).toBe(429);
    const [laneShown, expressShown] = shownAtOneMoment(lane, express, elapsed);
    expect(laneShown).toEqual(expressShown);
    expect(JSON.parse(lane.body).error).toMatch(/^rate limit exceeded: this key may make 6 read requests/);
    expect(lane.headers['retry-after']).toMatch(/^\d+$/);
    // A refused request never reached the route: express labels it `unmatched`; so does the lane.
    expect(await sample(service, 'http_requests_total', { route: 'unmatched', status: '429' })).toBe(
      refusedBefore + 2,
    );
  });

  it('refuses a blocked address as express does, but for keys that authenticated from it before', async () => {
    const { service } = started;
    const page = '/v1/restaking/avs-stats?queryID=3693850&limit=1';
    const from = '127.0.0.21';
    expect((await get(service, page, { key: KEYS.carol, from })).status).toBe(200);
    // AUTH_FAILURE_LIMIT=3: three wrong keys are answered 401, the fourth blocks the address.
    for (let i = 0; i < 4; i++)
      expect((await get(service, page, { key: `wrong-key-00000${i}`, from })).status).toBe(i < 3 ? 401 : 429);
    const before = await laneCount(service);
    const blocked = await get(service, page, { key: KEYS.bob, from });
    expect(await laneCount(service)).toBe(before + 1);
    expect(blocked.status).toBe(429);
    expect(JSON.parse(blocked.body).error).toMatch(/^too many failed authentications from this address/);
    const expressBlocked = await viaExpress(service, page, KEYS.bob, from);
    expect(await laneCount(service)).toBe(before + 1);
    const seconds = (answer: Answer) => Number(answer.headers['retry-after']);
    expect(seconds(blocked) - seconds(expressBlocked)).toBeGreaterThanOrEqual(0);
    expect(seconds(blocked) - seconds(expressBlocked)).toBeLessThanOrEqual(1);
    const atOneMoment = (answer: Answer) => {
      const { headers, body, ...rest } = shown(answer);
      return {
        ...rest,
        headers: { ...headers, 'retry-after': 'n' },
        body: body.replace(/retry in \d+ s/, ''),
      };
    };
    expect(atOneMoment(blocked)).toEqual(atOneMoment(expressBlocked));
    // carol authenticated from here before the block: still served, in the lane.
    expect((await get(service, page, { key: KEYS.carol, from })).status).toBe(200);
    expect(await laneCount(service)).toBe(before + 2);
    // Another address is not blocked.
    expect((await get(service, page, { key: KEYS.bob, from: '127.0.0.22' })).status).toBe(200);
  });
});

describe('the request log', () => {
  it('is not written when info lines are off, and the lane still answers', async () => {
    const started = await start({ RATE_LIMITS: 'off' }, 'warn');
    try {
      const { service, lines } = started;
      const page = '/v1/restaking/avs-stats?queryID=3693850&limit=2';
      const before = await laneCount(service);
      const lane = await get(service, page, { key: KEYS.bob });
      expect(await laneCount(service)).toBe(before + 1);
      expect(shown(lane)).toEqual(shown(await viaExpress(service, page, KEYS.bob)));
      expect(lines.filter((line) => line.msg === 'request')).toEqual([]);
    } finally {
      await stop(started);
    }
  }, 90_000);
});

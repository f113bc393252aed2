import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import type { RequestStep } from '../../src/http/request-step.js';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * The request pipeline is declared once (src/http/request-pipeline.ts) and run by both doors:
 * express, and the fast lane in front of it. A step given to the service (ServiceHooks) must
 * reach both, in its place: after the key was identified, before the route.
 */

/** Stamps whose key it saw; refuses a request that asks to be refused, before its route. */
const STAMP: RequestStep = {
  name: 'test stamp',
  run(exchange, next) {
    exchange.res.setHeader('X-Test-Step', exchange.identity?.account.handle ?? 'nobody');
    if (exchange.req.headers['x-test-refuse'] !== undefined)
      next(new ApiError('forbidden', 'refused by a test step'));
    else next();
  },
};

const METRICS_PAGE = '/v1/restaking/avs-stats?queryID=3693850&limit=2';

let service: TestService;

/** The requests the fast lane answered so far (/metrics). */
async function laneCount(): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('http_fast_lane_requests_total '));
  return Number(line?.split(' ')[1] ?? 0);
}

beforeAll(async () => {
  service = await startTestService({ DEMO_DATA: 'on' }, tempDir(), { requestSteps: [STAMP] });
  // The demo data set is loaded at start and the metrics query runs at once.
  for (const until = Date.now() + 60_000; ; ) {
    const { body } = await service.json<{ state: string }>(METRICS_PAGE);
    if (body.state === 'QUERY_STATE_COMPLETED') break;
    if (Date.now() > until) throw new Error(`the metrics query did not complete: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 90_000);
afterAll(() => service.stop());

describe('a step added to the pipeline', () => {
  it('reaches a route the fast lane answers, after the key was identified', async () => {
    const before = await laneCount();
    const response = await service.request(METRICS_PAGE, { key: KEYS.bob });
    expect(response.status).toBe(200);
    expect(await laneCount()).toBe(before + 1);
    expect(response.headers.get('x-test-step')).toBe('bob');
  });

  it('reaches the same route through express, and express routes', async () => {
    const before = await laneCount();
    const viaExpress = await service.request(`${METRICS_PAGE}&api_key=${KEYS.bob}`, { key: null });
    const account = await service.request('/v1/account', { key: KEYS.alice });
    const unknownPath = await service.request('/api/v1/no-such-thing', { key: KEYS.alice });
    expect(await laneCount()).toBe(before);
    expect([viaExpress.status, account.status, unknownPath.status]).toEqual([200, 200, 404]);
    expect(viaExpress.headers.get('x-test-step')).toBe('bob');
    expect(account.headers.get('x-test-step')).toBe('alice');
    expect(unknownPath.headers.get('x-test-step')).toBe('alice');
  });

  it('answers its refusal alike in both doors, before the route', async () => {
    const before = await laneCount();
    const refuse = { 'x-test-refuse': 'yes' };
    const lane = await service.request(METRICS_PAGE, { key: KEYS.bob, headers: refuse });
    const express = await service.request(METRICS_PAGE.replace('/v1/', '/V1/'), {
      key: KEYS.bob,
      headers: refuse,
    });
    const account = await service.request('/v1/account', { key: KEYS.bob, headers: refuse });
    expect(await laneCount()).toBe(before + 1);
    for (const response of [lane, express, account]) {
      expect(response.status).toBe(403);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('x-test-step')).toBe('bob');
      expect(await response.json()).toEqual({ error: 'refused by a test step' });
    }
  });

  it('runs on API requests only: not on /health', async () => {
    const health = await service.request('/health', { key: null });
    expect(health.status).toBe(200);
    expect(health.headers.get('x-test-step')).toBeNull();
  });
});

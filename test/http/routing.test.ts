import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

describe('routing', () => {
  it('GET /health answers without a key', async () => {
    const { status, body } = await service.json('/health', { key: null });
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok' });
  });

  it('answers every API path under /v1 and /api/v1', async () => {
    for (const prefix of ['/v1', '/api/v1']) {
      expect((await service.json(`${prefix}/tables`)).status).toBe(200);
      expect((await service.json(`${prefix}/account`)).status).toBe(200);
    }
  });

  it('an unknown path is a JSON 404, never HTML', async () => {
    for (const path of ['/nope', '/v1/nope', '/api/v1/table/upload', '/v2/tables', '/api/v1/tables/x/y/z']) {
      const response = await service.request(path);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      expect(await response.json()).toEqual({ error: expect.stringMatching(/no such path/) });
    }
  });

  it('a known path with another method is a JSON 405 with Allow', async () => {
    const response = await service.request('/v1/table/upload/csv', { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toEqual({ error: 'method GET is not allowed here; use POST' });
    const put = await service.request('/api/v1/tables', { method: 'PUT' });
    expect(put.status).toBe(405);
  });

  it('headers too large get a JSON 431', async () => {
    const response = await service.request('/v1/tables', { headers: { 'x-big': 'x'.repeat(64 * 1024) } });
    expect(response.status).toBe(431);
    expect(await response.json()).toEqual({ error: 'request headers too large' });
  });

  it('never shows a stack trace: a malformed query string is a clean 400', async () => {
    const { status, body } = await service.json('/v1/tables?limit=%E0%A4%A');
    expect(status).toBe(400);
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
  });
});

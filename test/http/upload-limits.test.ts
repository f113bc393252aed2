import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

let service: TestService;
const LIMIT = 100_000;

beforeAll(async () => {
  service = await startTestService({ MAX_UPLOAD_BYTES: String(LIMIT) });
  const { status } = await service.json(
    '/v1/table/upload/csv',
    uploadBody({ table_name: 'kept', data: 'a\n1\n' }),
  );
  expect(status).toBe(200);
});
afterAll(async () => {
  await service.stop();
});

/** Sends a body in pieces without Content-Length (chunked), like a streaming client. */
function sendChunked(pieces: Buffer[], declaredLength?: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${service.url}/v1/table/upload/csv`);
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'x-service-api-key': KEYS.alice,
    };
    if (declaredLength !== undefined) headers['content-length'] = declaredLength;
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    let i = 0;
    const next = () => {
      if (i === pieces.length) {
        req.end();
        return;
      }
      req.write(pieces[i++], () => setImmediate(next));
    };
    next();
  });
}

async function keptRows() {
  return service.database.read((s) => s.all('SELECT * FROM alice.dataset_kept'));
}

describe('upload size limit', () => {
  it('a body of exactly the limit is refused with 413 from Content-Length, before reading it', async () => {
    const data = 'a\n'.padEnd(LIMIT, '1');
    const body = JSON.stringify({ table_name: 'kept', data });
    const { status, body: answer } = await service.json('/v1/table/upload/csv', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(status).toBe(413);
    expect(JSON.parse(JSON.stringify(answer))).toEqual({
      error: `the request body must be smaller than ${LIMIT} bytes; split the data and append it with the insert operation`,
    });
    expect(await keptRows()).toEqual([{ a: 1n }]);
  });

  it('a body just under the limit is accepted', async () => {
    const prefix = '{"table_name":"near","data":"a\\n';
    const suffix = '"}';
    const body = prefix + '1'.repeat(LIMIT - 1 - prefix.length - suffix.length) + suffix;
    expect(Buffer.byteLength(body)).toBe(LIMIT - 1);
    const { status } = await service.json('/v1/table/upload/csv', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(status).toBe(200);
  });

  it('a chunked body that grows past the limit is cut off with 413 while streaming', async () => {
    const head = Buffer.from('{"table_name":"kept","data":"a\\n');
    const filler = Buffer.alloc(16_384, '1'.charCodeAt(0));
    const pieces = [head, ...Array.from({ length: 12 }, () => filler), Buffer.from('"}')];
    const { status, body } = await sendChunked(pieces);
    expect(status).toBe(413);
    expect(JSON.parse(body).error).toMatch(/smaller than 100000 bytes/);
    expect(await keptRows()).toEqual([{ a: 1n }]);
  });

  it('the service keeps answering after a cut-off upload', async () => {
    expect((await service.json('/v1/account')).status).toBe(200);
  });
});

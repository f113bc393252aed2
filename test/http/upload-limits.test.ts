import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResponse, send } from '../hostile/raw-http.js';
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

  it('stores the next upload after one cut off while streaming, and keeps the table as it was', async () => {
    const head = Buffer.from('{"table_name":"kept","data":"a\\n');
    const filler = Buffer.alloc(16_384, '1'.charCodeAt(0));
    const cut = await sendChunked([head, ...Array.from({ length: 12 }, () => filler), Buffer.from('"}')]);
    expect(cut.status).toBe(413);
    // Under the limit, also chunked, on a new connection: stored whole.
    const next = await sendChunked([Buffer.from('{"table_name":"after_cut","data":"a\\n2\\n3\\n"}')]);
    expect(next.status, next.body).toBe(200);
    const stored = await service.database.read((s) =>
      s.all('SELECT a FROM alice.dataset_after_cut ORDER BY a'),
    );
    expect(stored).toEqual([{ a: 2n }, { a: 3n }]);
    expect(await keptRows()).toEqual([{ a: 1n }]);
  });
});

/**
 * Limits answered at once, to a client that sends no body: it asked `Expect: 100-continue`,
 * or it stalls after the headers. Each must get its 413 and see the connection closed
 * without sending a byte of the body; `send` gives up after 5 s, half the time the service
 * would otherwise have waited for a body (10 s).
 */
describe('a body declared over the limit, never sent', () => {
  const port = () => Number(new URL(service.url).port);
  const headers = (length: number, type: string, ...extra: [string, string][]): [string, string][] => [
    ['X-Service-Api-Key', KEYS.alice],
    ['Content-Type', type],
    ['Content-Length', String(length)],
    ...extra,
  ];
  const expectContinue: [string, string] = ['Expect', '100-continue'];

  it.each([
    ['upload', '/v1/table/upload/csv', 'application/json'],
    ['insert', '/v1/table/alice/nowhere/insert', 'text/csv'],
    ['create', '/v1/table/create', 'application/json'],
    ['execute', '/v1/query/3693850/execute', 'application/json'],
  ])(
    'with Expect: 100-continue (%s): 413 at once, never 100 Continue, then the connection closes',
    async (_, target, type) => {
      const answer = await send(
        port(),
        { method: 'POST', target, headers: headers(250_000_000, type, expectContinue), framing: 'as-given' },
        5_000,
      );
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body.toString()).error).toMatch(/smaller than 100000 bytes|too large/);
    },
  );

  it('without Expect, the client waiting after its headers: 413 at once, then the connection closes', async () => {
    const answer = await send(
      port(),
      {
        method: 'POST',
        target: '/v1/table/upload/csv',
        headers: headers(250_000_000, 'application/json'),
        framing: 'as-given',
      },
      5_000,
    );
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body.toString()).error).toMatch(/smaller than 100000 bytes/);
  });

  it('with Expect: 100-continue under the limit: 100 Continue, then the body is stored', async () => {
    const body = Buffer.from(JSON.stringify({ table_name: 'continued', data: 'a\n7\n' }));
    const continued = 'HTTP/1.1 100 Continue\r\n\r\n';
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const socket = net.connect(port(), '127.0.0.1');
      const chunks: Buffer[] = [];
      let sent = false;
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        // The body goes out only once the service has said to go on.
        if (!sent && Buffer.concat(chunks).toString('latin1').startsWith(continued)) {
          sent = true;
          socket.write(body);
        }
      });
      socket.on('end', () => resolve(Buffer.concat(chunks)));
      socket.on('error', reject);
      const head = headers(body.length, 'application/json', expectContinue)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(
        `POST /v1/table/upload/csv HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${head}\r\n`,
      );
    });
    expect(raw.toString('latin1').startsWith(continued)).toBe(true);
    expect(parseResponse(raw.subarray(continued.length)).status).toBe(200);
    expect((await service.json('/v1/table/alice/dataset_continued')).status).toBe(200);
  });

  it('stores the next upload after refusing one that waited for 100 Continue', async () => {
    const refused = await send(
      port(),
      {
        method: 'POST',
        target: '/v1/table/upload/csv',
        headers: headers(250_000_000, 'application/json', expectContinue),
        framing: 'as-given',
      },
      5_000,
    );
    expect(refused.status).toBe(413);
    const { status, body } = await service.json(
      '/v1/table/upload/csv',
      uploadBody({ table_name: 'after_refusal', data: 'a\n5\n' }),
    );
    expect(status, JSON.stringify(body)).toBe(200);
    const stored = await service.database.read((s) => s.all('SELECT a FROM alice.dataset_after_refusal'));
    expect(stored).toEqual([{ a: 5n }]);
    expect(await keptRows()).toEqual([{ a: 1n }]);
  });
});

import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sendAnswer } from '../../src/http/send-answer.js';
import { FileBody } from '../../src/results/page-body.js';
import type { Answer } from '../../src/results/results.js';
import { tempDir } from '../support/service.js';

/**
 * A large page sent from its file over a real socket: the file is removed whether the client
 * reads it all, goes away, or stops reading (then, after `stalledMs` without progress, its
 * connection is closed).
 */

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A server answering every request with a page of `bytes` bytes of rows from a file of its own. */
async function pageServer(bytes: number, stalledMs: number) {
  const dir = tempDir('large-page-');
  let n = 0;
  const sent: Promise<void>[] = [];
  const responses: http.ServerResponse[] = [];
  const server = http.createServer((_req, res) => {
    responses.push(res);
    const file = path.join(dir, `rows-${n++}.csv`);
    fs.writeFileSync(file, Buffer.alloc(bytes, 'x'));
    const answer: Answer = {
      status: 200,
      contentType: 'text/csv',
      headers: {},
      body: new FileBody([{ path: file, size: bytes }], bytes, Buffer.from('head\n'), Buffer.from('tail\n')),
      datapoints: 0,
    };
    sent.push(sendAnswer(res, answer, stalledMs));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, dir, sent, responses };
}

describe('a large page sent from its file', () => {
  it('reaches a client that reads it, whole, framed by its length, and the file is removed', async () => {
    const { url, dir, sent } = await pageServer(5_000_000, 60_000);
    const response = await fetch(url);
    expect(response.headers.get('content-length')).toBe(String(5 + 5_000_000 + 5));
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.byteLength).toBe(5 + 5_000_000 + 5);
    expect(body.subarray(0, 6).toString()).toBe('head\nx');
    expect(body.subarray(-6).toString()).toBe('xtail\n');
    await Promise.all(sent);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('is given up for a client that stops reading: its connection closed, the file removed', async () => {
    // Far more than the sockets' buffers hold, so the writes wait on the client.
    const { url, dir, sent, responses } = await pageServer(64_000_000, 300);
    http.get(url, (response) => response.pause()); // and never reads
    while (sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // Settles only because the wait for the client ended: it never reads.
    await Promise.all(sent);
    expect(responses[0]?.writableFinished).toBe(false);
    expect(responses[0]?.destroyed).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

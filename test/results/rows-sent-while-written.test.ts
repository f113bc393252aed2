import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../src/executions/execution.js';
import { sendAnswer } from '../../src/http/send-answer.js';
import { FileBody, type Parts, PartsBody, type RowsBeingWritten } from '../../src/results/page-body.js';
import { PAGE_FORMATS } from '../../src/results/result-format.js';
import { parseResultRequest } from '../../src/results/result-request.js';
import { ResultRows } from '../../src/results/result-rows.js';
import type { Answer } from '../../src/results/results.js';
import { Results } from '../../src/results/results.js';
import { firstRows, startRowsFile } from '../../src/results/rows-file.js';
import { RowsInParts } from '../../src/results/rows-in-parts.js';
import { executeSql, finished } from '../queries/support/queries.js';
import { startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * A long range of a result (a whole CSV or JSON answer) is written by DuckDB in parts, and
 * each part is sent while DuckDB writes it: the reader follows the file as it grows and
 * sends a JSON part's last byte (the `,` after its last row) never. Whatever the parts'
 * size, the answer holds the same bytes, and no file is left.
 */

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** The text of a JSON answer's rows, as sent: between `"rows":[` and `],"metadata":`. */
function rowsText(body: string): string {
  const start = body.indexOf('"rows":[') + '"rows":['.length;
  return body.slice(start, body.lastIndexOf('],"metadata":'));
}

/** Sends `answer` to one client over a real socket; the body received. */
async function sentOverHttp(answer: Answer): Promise<Buffer> {
  let sent: Promise<void> | undefined;
  const server = http.createServer((_req, res) => {
    sent = sendAnswer(res, answer);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const body = Buffer.from(await response.arrayBuffer());
  await sent;
  return body;
}

/** A file written in steps by the test, as DuckDB writes a part: `write` appends, `finish` ends it. */
function fileWrittenInSteps(dir: string, trailing: number) {
  const file = path.join(dir, 'rows-steps');
  fs.writeFileSync(file, '');
  let finish: () => void = () => undefined;
  const written = new Promise<FileBody>((resolve) => {
    finish = () => resolve(FileBody.written([{ path: file, size: fs.statSync(file).size }], trailing));
  });
  const rows: RowsBeingWritten = { path: file, created: Promise.resolve(), written, trailing };
  return { rows, write: (text: string) => fs.appendFileSync(file, text), finish: () => finish() };
}

/** An answer of `parts` between `[` and `tail`. */
function jsonAnswer(parts: Parts, tail: (rowsBytes: number) => string): Answer {
  return {
    status: 200,
    contentType: 'application/json',
    headers: {},
    body: new PartsBody(parts, Buffer.from(',')).framed('[', tail),
    datapoints: 0,
  };
}

/** The parts of a page's body (a long range). */
function partsOf(answer: Answer): RowsInParts {
  if (answer.body.kind !== 'parts') throw new Error(`a long range in ${answer.body.kind}`);
  return answer.body.parts as RowsInParts;
}

describe('a part sent while it is written', () => {
  it('reaches the client as it grows, less the separator after its last JSON row', async () => {
    const dir = tempDir('rows-growing-');
    const part = fileWrittenInSteps(dir, 1);
    const answer = jsonAnswer(new RowsInParts(1, () => part.rows, 1, 2), (n) => `]${n}`);
    let sent: Promise<void> | undefined;
    const server = http.createServer((_req, res) => {
      sent = sendAnswer(res, answer);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const received: string[] = [];
    const body = new Promise<string>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (response) => {
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => received.push(chunk));
          response.on('end', () => resolve(received.join('')));
        })
        .on('error', reject);
    });
    /** Waits until the client has received `text`, and a little longer: it must not receive more. */
    const receivedNow = async (text: string) => {
      for (let i = 0; i < 250 && received.join('') !== text; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 50));
      expect(received.join('')).toBe(text);
    };
    // While the file grows, its last byte waits (it may be the separator after the last row).
    part.write('{"a":1},');
    await receivedNow('[{"a":1}');
    part.write('{"a":2},{"a"');
    await receivedNow('[{"a":1},{"a":2},{"a');
    part.write(':3},');
    await receivedNow('[{"a":1},{"a":2},{"a":3}');
    part.finish();
    expect(await body).toBe('[{"a":1},{"a":2},{"a":3}]23');
    await sent;
    // The file is the sender's to remove once written and sent.
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a part looked at but never taken is removed once written, when the client left before its first byte', async () => {
    const dir = tempDir('rows-growing-');
    const part = fileWrittenInSteps(dir, 1);
    const parts = new RowsInParts(1, () => part.rows, 1, 1);
    // What result-rows does before answering: look at the first part's rows without taking it.
    expect(parts.first).toBe(part.rows);
    const answer = jsonAnswer(parts, () => ']');
    let sent: Promise<void> | undefined;
    const server = http.createServer((req, res) => {
      // Answered only once the client has gone.
      req.socket.once('close', () => {
        sent = sendAnswer(res, answer);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const request = http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    request.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    request.destroy();
    for (let i = 0; i < 100 && !sent; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    part.write('{"a":1},');
    part.finish();
    await sent;
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a part whose statement fails before any row is an error before any byte', async () => {
    const service = await startTestService();
    try {
      const failing = new RowsInParts(
        1,
        () =>
          startRowsFile(
            (sql, params) => service.database.read((session) => session.run(sql, params)),
            { select: 'SELECT r FROM no_such_table', params: [] },
            PAGE_FORMATS.csv,
            path.join(service.dataDir, 'tmp'),
          ),
        1,
        2,
      );
      await expect(firstRows(failing.part(0))).rejects.toThrow(/no_such_table/);
      await failing.discard();
      expect(fs.readdirSync(path.join(service.dataDir, 'tmp')).filter((f) => f.startsWith('rows-'))).toEqual(
        [],
      );
    } finally {
      await service.stop();
    }
  });
});

describe('a long range in parts of any size', () => {
  const ROWS = 250_000;
  let service: TestService;
  let execution: Execution;
  let paged: { csv: string; json: string };

  beforeAll(async () => {
    service = await startTestService();
    // Six columns of the kinds users have, text that needs CSV quoting and JSON escapes, NULLs.
    const id = await executeSql(
      service,
      `SELECT i AS id,
        CASE WHEN i % 1000 = 7 THEN NULL ELSE CAST(i AS DOUBLE) * 1.5 END AS amount,
        CASE WHEN i % 5000 = 1 THEN 'a,"b"' || chr(10) || 'c' ELSE 'token_' || (i % 13) END AS label,
        TIMESTAMP '2024-01-01' + to_seconds(i) AS at,
        i % 3 = 0 AS flag
        FROM range(${ROWS}) r(i)`,
    );
    expect((await finished(service, id)).state).toBe('QUERY_STATE_COMPLETED');
    execution = service.executions.get(id) as Execution;
    // The same rows through pages of 50,000 (each one statement into one file, sent once
    // written): another path than parts sent while written.
    let csv = '';
    const jsonRows: string[] = [];
    for (let offset = 0; offset < ROWS; offset += 50_000) {
      const query = `?limit=50000&offset=${offset}&ignore_max_datapoints_per_request=true`;
      const page = await (await service.request(`/v1/execution/${id}/results/csv${query}`)).text();
      csv += offset === 0 ? page : page.slice(page.indexOf('\n') + 1);
      jsonRows.push(rowsText(await (await service.request(`/v1/execution/${id}/results${query}`)).text()));
    }
    paged = { csv, json: jsonRows.join(',') };
  });
  afterAll(async () => {
    await service.stop();
  });

  it.each([
    ['json', 2_000_000],
    ['csv', 2_000_000],
    ['json', 30_000_000],
    ['csv', 1 << 30],
  ] as const)(
    '%s in parts of %i bytes: the rows the pages hold, byte for byte, in order',
    async (format, partBytes) => {
      const tmpDir = path.join(service.dataDir, 'tmp');
      const rows = new ResultRows(service.database, {
        inMemoryMaxRows: 1_000,
        cacheBytes: 1 << 20,
        tmpDir,
        inMemoryPageBytes: 1 << 20,
        partBytes,
        prefetch: { maxPages: 2, ttlMs: 60_000 },
      });
      const results = new Results(service.executions, rows, {
        maxDatapointsPerRequest: 1_000,
        baseUrl: () => service.url,
        cacheBytes: 1 << 20,
        maxCachedAnswerBytes: 1 << 20,
      });
      try {
        const request = parseResultRequest(new Map([['ignore_max_datapoints_per_request', 'true']]));
        const answer = await results.answer(execution, request, format, '/v1');
        const parts = partsOf(answer).count;
        expect(parts).toBeGreaterThanOrEqual(partBytes < 10_000_000 ? 10 : 1);
        const body = (await sentOverHttp(answer)).toString();
        const sentRows = format === 'csv' ? body : rowsText(body);
        expect(sentRows === paged[format], `${parts} parts`).toBe(true);
        if (format === 'json') {
          const ids = (JSON.parse(body) as { result: { rows: { id: number }[] } }).result.rows.map(
            (r) => r.id,
          );
          expect(ids).toEqual(Array.from({ length: ROWS }, (_, i) => i));
        }
        expect(fs.readdirSync(tmpDir).filter((file) => file.startsWith('rows-'))).toEqual([]);
      } finally {
        await results.close();
      }
    },
  );
});

/**
 * The most row files on disk at once while a client takes the first bytes of a whole CSV of
 * `rows` rows of `width` characters, written in parts of `rowsPerPart` rows, and then reads
 * nothing: until the part after the one being sent is on disk, then half a second more.
 */
async function mostPartsOnDisk(
  rows: number,
  width: number,
  rowsPerPart: number,
  parts: number,
): Promise<number> {
  const service = await startTestService();
  try {
    const id = await executeSql(service, `SELECT i, repeat('x', ${width}) AS s FROM range(${rows}) r(i)`);
    expect((await finished(service, id)).state).toBe('QUERY_STATE_COMPLETED');
    const execution = service.executions.get(id) as Execution;
    const tmpDir = path.join(service.dataDir, 'tmp');
    const bytesPerRow = (execution.resultBytes ?? 0) / rows;
    const results = new Results(
      service.executions,
      new ResultRows(service.database, {
        inMemoryMaxRows: 1_000,
        cacheBytes: 1 << 20,
        tmpDir,
        inMemoryPageBytes: 1 << 20,
        partBytes: Math.ceil(rowsPerPart * bytesPerRow),
        prefetch: { maxPages: 2, ttlMs: 60_000 },
      }),
      {
        maxDatapointsPerRequest: 1_000,
        baseUrl: () => service.url,
        cacheBytes: 1 << 20,
        maxCachedAnswerBytes: 1 << 20,
      },
    );
    const request = parseResultRequest(new Map([['ignore_max_datapoints_per_request', 'true']]));
    const answer = await results.answer(execution, request, 'csv', '/v1');
    expect(partsOf(answer).count).toBe(parts);
    let sent: Promise<void> | undefined;
    const server = http.createServer((_req, res) => {
      sent = sendAnswer(res, answer);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (response) =>
      response.once('data', () => response.pause()),
    );
    client.on('error', () => undefined);
    const rowFiles = () => fs.readdirSync(tmpDir).filter((f) => f.startsWith('rows-')).length;
    let most = 0;
    for (let i = 0, after = 0; i < 400 && after < 20; i++) {
      most = Math.max(most, rowFiles());
      if (most >= 2) after++;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    client.destroy();
    await sent;
    await results.close();
    expect(rowFiles()).toBe(0);
    return most;
  } finally {
    await service.stop();
  }
}

describe('a long range in parts over many row groups', () => {
  it('has at most two parts on disk while a slow client reads it', async () => {
    // Parts of 270,000 rows: over two row groups each, so written one at a time; three of them.
    expect(await mostPartsOnDisk(800_000, 200, 270_000, 3)).toBe(2);
  });

  it('has at most two parts on disk when rows are wide (parts under two row groups, written two at a time)', async () => {
    // Rows of ~600 bytes: at the default part size (128 MB) a part is ~210,000 rows, under two
    // row groups, so the parts are written two at a time. Scaled down here: parts of 50,000
    // rows. Two parts ahead of the one sent, as before, had three on disk.
    expect(await mostPartsOnDisk(300_000, 600, 50_000, 6)).toBe(2);
  });
});

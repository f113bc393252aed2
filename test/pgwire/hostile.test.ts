import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrontendFraming, ProtocolViolation } from '../../src/pgwire/frontend-framing.js';
import { connectPg, pgError, RawWire, serialize, startPgService } from '../support/pg-wire.js';
import type { TestService } from '../support/service.js';
import { uploadBody } from '../support/service.js';

/**
 * Hostile input on the Postgres wire: each bad connection ends with an error or a closed
 * socket, nothing else is affected, and the stored data stays exactly as it was.
 */

let service: TestService & { pgPort: number };
const TABLE = 'SELECT day, token, price FROM dataset_prices ORDER BY day';
let rowsBefore: unknown[];

beforeAll(async () => {
  service = await startPgService();
  const upload = await service.request(
    '/v1/table/upload/csv',
    uploadBody({
      table_name: 'prices',
      data: 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n',
    }),
  );
  expect(upload.status).toBe(200);
  rowsBefore = (await (await connectPg(service.pgPort)).query(TABLE)).rows;
});

afterAll(async () => {
  // Nothing any test sent changed the data, and the service still answers both doors.
  const client = await connectPg(service.pgPort);
  expect((await client.query(TABLE)).rows).toEqual(rowsBefore);
  expect((await service.request('/v1/tables')).status).toBe(200);
});

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** A fatal error then a closed connection. */
async function fatal(wire: RawWire): Promise<Record<string, unknown>> {
  await wire.closed;
  const error = wire.messages.find((m) => m.name === 'error');
  if (!error) throw new Error(`no error before the close: ${wire.names().join(', ')}`);
  expect(error.severity).toBe('FATAL');
  return error;
}

describe('framing', () => {
  it('refuses a startup packet declared 1 GB long at once, holding nothing', async () => {
    const wire = await RawWire.open(service.pgPort);
    wire.send(int32(1024 ** 3));
    wire.send(Buffer.alloc(1000, 7));
    expect((await fatal(wire)).code).toBe('08P01');
  });

  it('refuses a length of -1, in the startup packet and after it', async () => {
    const first = await RawWire.open(service.pgPort);
    first.send(int32(-1));
    expect((await fatal(first)).code).toBe('08P01');
    const second = await RawWire.login(service.pgPort);
    second.send(Buffer.concat([Buffer.from('Q'), int32(-1)]));
    expect((await fatal(second)).code).toBe('08P01');
  });

  it('answers a message larger than it keeps with 54000, skipping its bytes, and goes on', async () => {
    const wire = await RawWire.login(service.pgPort);
    const start = wire.messages.length;
    const body = Buffer.alloc(5 * 1024 * 1024, 0x20);
    wire.send(Buffer.concat([Buffer.from('Q'), int32(4 + body.length + 1), body, Buffer.from([0])]));
    const error = await wire.waitFor('error', start);
    expect(error.code).toBe('54000');
    await wire.waitFor('readyForQuery', start);
    const next = wire.messages.length;
    wire.send(serialize.query('SELECT 7'));
    expect((await wire.waitFor('commandComplete', next)).text).toBe('SELECT 1');
  });

  it("refuses a query of 1 MB with 54000 (the sandbox's limit), and the session goes on", async () => {
    const client = await connectPg(service.pgPort);
    const error = await pgError(client.query(`SELECT 1 -- ${'x'.repeat(1024 * 1024)}`));
    expect(error.code).toBe('54000');
    await expect(client.query('SELECT 1 AS ok')).resolves.toMatchObject({ rows: [{ ok: 1 }] });
  });

  it('closes on an unknown message type, a truncated message, or garbage at start', async () => {
    const unknown = await RawWire.login(service.pgPort);
    unknown.send(Buffer.concat([Buffer.from('!'), int32(4)]));
    expect((await fatal(unknown)).code).toBe('08P01');
    const truncated = await RawWire.login(service.pgPort);
    truncated.send(Buffer.concat([Buffer.from('B'), int32(6), Buffer.from([0, 0])]));
    expect((await fatal(truncated)).code).toBe('08P01');
    const garbage = await RawWire.open(service.pgPort);
    garbage.send(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await garbage.closed;
  });

  it('refuses bytes sent after an SSLRequest before the answer was read', async () => {
    const wire = await RawWire.open(service.pgPort);
    wire.send(Buffer.concat([serialize.requestSsl(), serialize.startup({ user: 'x' })]));
    await wire.closed;
  });

  it('cuts any byte stream into frames or refuses it, never more memory than its limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }),
        fc.boolean(),
        (chunks, started) => {
          const framing = new FrontendFraming(1024);
          if (started) framing.started();
          try {
            for (const chunk of chunks) framing.push(Buffer.from(chunk));
          } catch (error) {
            expect(error).toBeInstanceOf(ProtocolViolation);
          }
          expect(framing.pendingBytes).toBeLessThanOrEqual(64 * 20);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('survives random messages after authentication', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...'PBDECSHQXdcfp'.split('')),
        fc.uint8Array({ maxLength: 40 }),
        async (type, body) => {
          const wire = await RawWire.login(service.pgPort);
          wire.send(
            Buffer.concat([Buffer.from(type), int32(body.length + 4), Buffer.from(body), serialize.sync()]),
          );
          wire.send(serialize.query('SELECT 1'));
          await Promise.race([wire.closed, wire.waitFor('commandComplete', 0, 5_000).catch(() => undefined)]);
          wire.socket.destroy();
        },
      ),
      { numRuns: 40 },
    );
    const client = await connectPg(service.pgPort);
    await expect(client.query('SELECT 2 AS still')).resolves.toMatchObject({ rows: [{ still: 2 }] });
  });
});

describe('statements', () => {
  it('refuses a write inside a multi-statement query, and runs nothing after it', async () => {
    const client = await connectPg(service.pgPort);
    const error = await pgError(client.query('SELECT 1; DELETE FROM dataset_prices; SELECT 2'));
    expect(error.code).toBe('42501');
  });

  it('takes injection attempts in parameters as plain values', async () => {
    const client = await connectPg(service.pgPort);
    for (const value of [
      "'; DROP TABLE dataset_prices; --",
      "stETH' OR '1'='1",
      '$1',
      '\\x00',
      '"; SELECT 1; --',
    ]) {
      const result = await client.query('SELECT count(*) AS n FROM dataset_prices WHERE token = $1', [value]);
      expect(result.rows).toEqual([{ n: '0' }]);
    }
  });

  it('refuses COPY in both directions, and LISTEN, with 0A000', async () => {
    const client = await connectPg(service.pgPort);
    for (const sql of [
      'COPY dataset_prices FROM STDIN',
      'COPY (SELECT 1) TO STDOUT',
      'LISTEN x',
      'UNLISTEN *',
    ]) {
      expect((await pgError(client.query(sql))).code).toBe('0A000');
    }
  });

  it('refuses an unknown key before anything else, and a blocked address past AUTH_FAILURE_LIMIT', async () => {
    const limited = await startPgService({ AUTH_FAILURE_LIMIT: '3' });
    for (let i = 0; i < 3; i++)
      expect((await pgError(connectPg(limited.pgPort, `guess-${i}-xxxxxxxx`))).code).toBe('28P01');
    const blocked = await pgError(connectPg(limited.pgPort, 'another-guess-xx'));
    expect(blocked.code).toBe('28000');
    expect(blocked.message).toMatch(/too many failed authentications from this address/);
  });
});

import net from 'node:net';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log.js';
import { PgCatalog } from '../../src/pgwire/catalog-queries.js';
import { startPgListener } from '../../src/pgwire/listener.js';
import { connectPg, pgError, RawWire, serialize, startPgService } from '../support/pg-wire.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * Large results, portals, cancel and the connection limits of the Postgres wire protocol.
 * No test times anything: a result held whole, a cancel lost or a stalled client kept would
 * each change what the client receives, not only how fast.
 */

let service: TestService & { pgPort: number };

beforeAll(async () => {
  service = await startPgService({ PG_MAX_CONNECTIONS: '40' });
});

const MILLION =
  "SELECT i, i * 0.5 AS half, 'row ' || i AS label, TIMESTAMP '2024-01-01' + INTERVAL (i) SECOND AS ts FROM range(1000000) t(i)";

describe('large results', () => {
  it('streams a 1,000,000-row result to pg, every row once and in order', async () => {
    const client = await connectPg(service.pgPort);
    let rows = 0;
    let ordered = true;
    await new Promise<void>((resolve, reject) => {
      const query = client.query(new pg.Query({ text: MILLION, rowMode: 'array' } as pg.QueryConfig));
      query.on('row', (row: unknown[]) => {
        if (Number(row[0]) !== rows) ordered = false;
        rows++;
      });
      query.on('end', () => resolve());
      query.on('error', reject);
    });
    expect(rows).toBe(1_000_000);
    expect(ordered).toBe(true);
  });

  it('holds back while the client reads nothing: memory stays far below the result', async () => {
    const wire = await RawWire.login(service.pgPort);
    wire.countRowsOnly = true;
    const before = process.memoryUsage().rss;
    wire.socket.pause();
    wire.send(serialize.query(MILLION));
    // The answer is about 70 MB of DataRows; with the client stalled only a socket's worth is written.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const grown = process.memoryUsage().rss - before;
    expect(grown).toBeLessThan(48 * 1024 * 1024);
    wire.socket.resume();
    const complete = await wire.waitFor('commandComplete', 0, 60_000);
    expect(complete.text).toBe('SELECT 1000000');
    expect(wire.dataRows).toBe(1_000_000);
  });

  it('reads a portal a few rows at a time (Execute with a row limit)', async () => {
    const wire = await RawWire.login(service.pgPort);
    const start = wire.messages.length;
    wire.send(
      Buffer.concat([
        serialize.parse({ text: 'SELECT i FROM range(5) t(i) ORDER BY i' }),
        serialize.bind({}),
        serialize.execute({ rows: 2 }),
        serialize.execute({ rows: 2 }),
        serialize.execute({ rows: 2 }),
        serialize.sync(),
      ]),
    );
    await wire.waitFor('readyForQuery', start);
    expect(wire.names(start)).toEqual([
      'parseComplete',
      'bindComplete',
      'dataRow',
      'dataRow',
      'portalSuspended',
      'dataRow',
      'dataRow',
      'portalSuspended',
      'dataRow',
      'commandComplete',
      'readyForQuery',
    ]);
  });
});

describe('cancel', () => {
  it('a CancelRequest on a second connection stops the running statement; the session goes on', async () => {
    const wire = await RawWire.login(service.pgPort);
    const key = wire.messages.find((m) => m.name === 'backendKeyData') as unknown as {
      processID: number;
      secretKey: number;
    };
    const start = wire.messages.length;
    wire.send(serialize.query('SELECT count(*) FROM range(1000000000000)'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = net.connect(service.pgPort, '127.0.0.1');
    await new Promise((resolve) => other.once('connect', resolve));
    other.end(serialize.cancel(key.processID, key.secretKey));
    const error = await wire.waitFor('error', start, 30_000);
    expect(error.code).toBe('57014');
    expect(error.message).toBe('canceling statement due to user request');
    await wire.waitFor('readyForQuery', start);
    const next = wire.messages.length;
    wire.send(serialize.query('SELECT 1'));
    expect((await wire.waitFor('commandComplete', next)).text).toBe('SELECT 1');
  });

  it('a wrong secret cancels nothing', async () => {
    const client = await connectPg(service.pgPort);
    const { processID } = client as unknown as { processID: number };
    const running = client.query('SELECT count(*) AS n FROM range(30000000)');
    const other = net.connect(service.pgPort, '127.0.0.1');
    await new Promise((resolve) => other.once('connect', resolve));
    other.end(serialize.cancel(processID, 12345));
    await expect(running).resolves.toMatchObject({ rows: [{ n: '30000000' }] });
  });
});

describe('connection limits', () => {
  it('refuses connections past PG_MAX_CONNECTIONS with 53300, and serves again once some close', async () => {
    const sockets: net.Socket[] = [];
    const answers: string[] = [];
    try {
      // In batches, so that the kernel's listen backlog (511) does not drop connection attempts.
      for (let i = 0; i < 2000; i++) {
        const socket = net.connect(service.pgPort, '127.0.0.1');
        socket.on('error', () => undefined);
        answers.push('');
        socket.on('data', (data: Buffer) => {
          answers[i] += data.toString('latin1');
        });
        sockets.push(socket);
        if (i % 250 === 249)
          await Promise.all(
            sockets.slice(-250).map((s) => new Promise((resolve) => s.once('connect', resolve))),
          );
      }
      // Refused at once: an ErrorResponse (E) with SQLSTATE 53300; the others wait for a start-up
      // packet.
      const refusedNow = () => answers.filter((a) => a.startsWith('E') && a.includes('C53300')).length;
      for (let waited = 0; refusedNow() < 2000 - 40 && waited < 30_000; waited += 200)
        await new Promise((resolve) => setTimeout(resolve, 200));
      const refused = refusedNow();
      expect(refused).toBeGreaterThanOrEqual(2000 - 40);
      expect(service.pg?.connections).toBeLessThanOrEqual(40);
      const response = await service.request('/v1/tables');
      expect(response.status).toBe(200);
      const error = await pgError(connectPg(service.pgPort));
      expect(error.code).toBe('53300');
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const client = await connectPg(service.pgPort);
    await expect(client.query('SELECT 1 AS back')).resolves.toMatchObject({ rows: [{ back: 1 }] });
  });

  it('lets go of a client that reads nothing for the stall limit, and of one that never authenticates', async () => {
    const catalog = await PgCatalog.open(service.database);
    const listener = await startPgListener(
      {
        config: loadConfig({ PG_MAX_CONNECTIONS: '10' }),
        keys: service.keys,
        queries: service.queries,
        database: service.database,
        catalog,
        logger: createLogger('silent'),
        lane: (_owner, work) => work(),
      },
      0,
      { maxMessageBytes: 1024 * 1024, startupTimeoutMs: 500, stallMs: 500 },
    );
    try {
      const silent = await RawWire.open(listener.port);
      await silent.closed;
      const wire = await RawWire.login(listener.port);
      wire.socket.pause();
      wire.send(serialize.query(MILLION));
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(listener.connections).toBe(0);
    } finally {
      await listener.close();
      await catalog.close();
    }
  });
});

describe('shutdown', () => {
  it('tells its sessions (57P01), stops their statements and closes, without waiting for them', async () => {
    const other = await startTestService({ PG_PORT: '0' });
    const port = other.pg?.port as number;
    const wire = await RawWire.login(port);
    const idle = await RawWire.login(port);
    wire.send(serialize.query('SELECT count(*) FROM range(1000000000000)'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await other.stop();
    await wire.closed;
    await idle.closed;
    const fatal = idle.messages.find((m) => m.name === 'error');
    expect(fatal?.code).toBe('57P01');
  });
});

describe("the users' lanes", () => {
  it("runs a key's statements in its slots (MAX_RUNNING_QUERIES_PER_KEY), other keys going on", async () => {
    const lanes = await startPgService({ MAX_RUNNING_QUERIES_PER_KEY: '1' });
    const first = await RawWire.login(lanes.pgPort);
    const key = first.messages.find((m) => m.name === 'backendKeyData') as unknown as {
      processID: number;
      secretKey: number;
    };
    first.send(serialize.query('SELECT count(*) FROM range(1000000000000)'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await connectPg(lanes.pgPort);
    let waited = true;
    const queued = second.query('SELECT count(*) AS n FROM range(10) t(i)').then((result) => {
      waited = false;
      return result;
    });
    const bob = await connectPg(lanes.pgPort, KEYS.bob);
    await expect(bob.query('SELECT count(*) AS n FROM range(3) t(i)')).resolves.toMatchObject({
      rows: [{ n: '3' }],
    });
    expect(waited).toBe(true);
    const cancel = net.connect(lanes.pgPort, '127.0.0.1');
    await new Promise((resolve) => cancel.once('connect', resolve));
    cancel.end(serialize.cancel(key.processID, key.secretKey));
    await expect(queued).resolves.toMatchObject({ rows: [{ n: '10' }] });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectPg, pgError, RawWire, serialize, startPgService } from '../support/pg-wire.js';
import type { TestService } from '../support/service.js';

/** TLS on the Postgres wire, with PG_TLS_CERT and PG_TLS_KEY (a test-only self-signed pair). */

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/pgwire-tls');
let secure: TestService & { pgPort: number };
let plain: TestService & { pgPort: number };

beforeAll(async () => {
  secure = await startPgService({
    PG_TLS_CERT: path.join(FIXTURES, 'cert.pem'),
    PG_TLS_KEY: path.join(FIXTURES, 'key.pem'),
  });
  plain = await startPgService();
});

describe('TLS', () => {
  it('upgrades a connection that asks, and serves it encrypted', async () => {
    const ca = fs.readFileSync(path.join(FIXTURES, 'cert.pem'));
    const client = await connectPg(secure.pgPort, undefined, { ssl: { ca, servername: 'localhost' } });
    const { rows } = await client.query('SELECT 1 AS over_tls');
    expect(rows).toEqual([{ over_tls: 1 }]);
    const socket = (client as unknown as { connection: { stream: unknown } }).connection.stream;
    expect(socket).toBeInstanceOf(tls.TLSSocket);
  });

  it('still serves a client that does not ask for TLS', async () => {
    const client = await connectPg(secure.pgPort);
    await expect(client.query('SELECT 2 AS clear')).resolves.toMatchObject({ rows: [{ clear: 2 }] });
  });

  it('without a certificate, answers an SSLRequest with N, so that sslmode=prefer goes on in clear', async () => {
    const wire = await RawWire.open(plain.pgPort);
    const answer = new Promise<Buffer>((resolve) => wire.socket.once('data', resolve));
    wire.send(serialize.requestSsl());
    expect((await answer).toString()).toBe('N');
    const required = await pgError(
      connectPg(plain.pgPort, undefined, { ssl: { rejectUnauthorized: false } }),
    );
    expect(String(required.message)).toMatch(/does not support SSL/);
  });
});

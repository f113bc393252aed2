import net from 'node:net';
import pg from 'pg';
import { parse, serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages.js';
import { afterAll } from 'vitest';
import { KEYS, startTestService, type TestService } from './service.js';

/**
 * Clients of the Postgres wire protocol for tests: npm `pg` as applications use it, and a
 * raw connection (npm `pg-protocol`'s serializer and parser, the client side's own) for
 * what no driver sends: messages one by one, malformed bytes, a CancelRequest.
 */

/** A test service with the Postgres listener on a free port, stopped after the file. */
export async function startPgService(
  env: Record<string, string> = {},
): Promise<TestService & { pgPort: number }> {
  const service = await startTestService({ PG_PORT: '0', ...env });
  afterAll(() => service.stop());
  const port = service.pg?.port;
  if (port === undefined) throw new Error('the service has no Postgres listener');
  return Object.assign(service, { pgPort: port });
}

/** A connected `pg` client (the key as password); ended after the file unless ended before. */
export async function connectPg(
  port: number,
  key: string = KEYS.alice,
  options: Partial<pg.ClientConfig> = {},
): Promise<pg.Client> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'tester',
    database: 'dune',
    password: key,
    ...options,
  });
  await client.connect();
  client.on('error', () => undefined);
  afterAll(() => client.end().catch(() => undefined));
  return client;
}

/** The error a promise rejects with, as `pg` reports a server's ErrorResponse. */
export async function pgError(promise: Promise<unknown>): Promise<pg.DatabaseError> {
  try {
    await promise;
  } catch (error) {
    return error as pg.DatabaseError;
  }
  throw new Error('expected the query to fail');
}

export type Message = BackendMessage & Record<string, unknown>;

/** A socket speaking the protocol message by message. */
export class RawWire {
  readonly messages: Message[] = [];
  /** DataRow messages received; with `countRowsOnly` they are counted and not kept. */
  dataRows = 0;
  countRowsOnly = false;
  readonly closed: Promise<void>;
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    void parse(socket, (message) => {
      if (message.name === 'dataRow') {
        this.dataRows++;
        if (this.countRowsOnly) return;
      }
      this.messages.push(message as Message);
      for (const wake of this.waiters.splice(0)) wake();
    }).catch(() => undefined);
    socket.once('close', () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async open(port: number): Promise<RawWire> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const wire = new RawWire(socket);
    afterAll(() => socket.destroy());
    return wire;
  }

  /** Connects and authenticates with the key; resolves at the first ReadyForQuery. */
  static async login(port: number, key: string = KEYS.alice): Promise<RawWire> {
    const wire = await RawWire.open(port);
    wire.send(serialize.startup({ user: 'tester', database: 'dune' }));
    await wire.waitFor('authenticationCleartextPassword');
    wire.send(serialize.password(key));
    await wire.waitFor('readyForQuery');
    return wire;
  }

  send(bytes: Buffer | Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Messages received since index `from`, by name. */
  names(from = 0): string[] {
    return this.messages.slice(from).map((m) => m.name);
  }

  /** Waits for a message of this name after index `from`; returns it. */
  async waitFor(name: string, from = 0, timeoutMs = 10_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    let next = from;
    for (;;) {
      for (; next < this.messages.length; next++) {
        const message = this.messages[next] as Message;
        if (message.name === name) return message;
      }
      if (this.socket.destroyed || Date.now() > deadline)
        throw new Error(`no ${name} message; got ${this.names(from).join(', ') || 'nothing'}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
}

export { serialize };

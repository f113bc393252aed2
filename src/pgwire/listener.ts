import fs from 'node:fs';
import net from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { KeyStore } from '../auth/key-store.js';
import { type Config, ConfigError } from '../config/config.js';
import type { Logger } from '../log.js';
import type { Queries } from '../queries/queries.js';
import type { Database } from '../storage/database.js';
import { BackendWriter, errorResponse } from './backend-messages.js';
import { CancelKeys } from './cancel.js';
import type { CatalogQueries } from './catalog-queries.js';
import type { Lane } from './run-statement.js';
import { SQLSTATE } from './sql-errors.js';
import { PasswordCheck } from './startup.js';
import { StatementCache } from './statement-cache.js';
import { WireConnection } from './wire-connection.js';

/**
 * The Postgres wire protocol's listener (DESIGN §11): PG_PORT on HOST, at most
 * PG_MAX_CONNECTIONS connections (more are told 53300 and closed at once, as PostgreSQL's
 * "too many clients"), TLS when PG_TLS_CERT and PG_TLS_KEY are set. Started and stopped with
 * the HTTP server by service.ts.
 */

export interface PgLimits {
  /** Messages larger than this are refused (the sandbox takes at most 64 KiB of SQL anyway). */
  maxMessageBytes: number;
  /** Time to authenticate before the connection is closed (PostgreSQL's authentication_timeout is 60 s). */
  startupTimeoutMs: number;
  /** A client that reads nothing for this long is let go: the HTTP answers' stall limit. */
  stallMs: number;
}

export const PG_LIMITS: PgLimits = {
  maxMessageBytes: 4 * 1024 * 1024,
  startupTimeoutMs: 30_000,
  stallMs: 60_000,
};
/** How long shutdown waits for connections to close after telling them. */
const CLOSE_GRACE_MS = 2_000;

export interface PgListenerDeps {
  config: Config;
  /** The users' lanes: each statement runs in a slot of its key, as executions do. */
  lane: Lane;
  keys: KeyStore;
  queries: Queries;
  database: Database;
  catalog: CatalogQueries;
  logger: Logger;
}

export interface PgListener {
  host: string;
  port: number;
  /** Connections open now. */
  readonly connections: number;
  close(): Promise<void>;
}

function tlsContext(config: Config): SecureContext | undefined {
  if (!config.pgTls) return undefined;
  try {
    return createSecureContext({
      cert: fs.readFileSync(config.pgTls.certFile),
      key: fs.readFileSync(config.pgTls.keyFile),
    });
  } catch (error) {
    throw new ConfigError(`PG_TLS_CERT/PG_TLS_KEY could not be used: ${(error as Error).message}`);
  }
}

export async function startPgListener(
  deps: PgListenerDeps,
  port: number,
  limits: PgLimits = PG_LIMITS,
): Promise<PgListener> {
  const { config } = deps;
  const tls = tlsContext(config);
  const connections = new Set<WireConnection>();
  const connectionDeps = {
    database: deps.database,
    lane: deps.lane,
    queries: deps.queries,
    catalog: deps.catalog,
    cache: new StatementCache(),
    logger: deps.logger,
    queryTimeoutMs: config.queryTimeoutSeconds * 1000,
    passwords: new PasswordCheck(deps.keys, config.authFailureLimit),
    cancelKeys: new CancelKeys(),
    tls,
    ...limits,
  };
  const server = net.createServer({ noDelay: true }, (socket) => {
    if (connections.size >= config.pgMaxConnections) {
      refuse(socket, limits.stallMs);
      return;
    }
    const connection = new WireConnection(socket, connectionDeps);
    connections.add(connection);
    void connection.closed.then(() => connections.delete(connection));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (error) => deps.logger.error({ err: error }, 'postgres wire listener failed'));
  const address = server.address() as net.AddressInfo;
  return {
    host: config.host,
    port: address.port,
    get connections() {
      return connections.size;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.terminate();
      const everyConnection = Promise.all([...connections].map((c) => c.closed));
      await Promise.race([everyConnection, new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS))]);
      await closed;
    },
  };
}

/** PostgreSQL's answer to one connection too many: 53300, then close. */
function refuse(socket: net.Socket, stallMs: number): void {
  socket.on('error', () => undefined);
  const writer = new BackendWriter(socket, stallMs);
  errorResponse(writer, {
    severity: 'FATAL',
    code: SQLSTATE.tooManyConnections,
    message: 'sorry, too many clients already',
  });
  writer.flush();
  socket.end();
  setTimeout(() => socket.destroy(), 1_000).unref();
}

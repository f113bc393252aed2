import type { Socket } from 'node:net';
import { type SecureContext, TLSSocket } from 'node:tls';
import type { Account } from '../auth/account.js';
import {
  authenticationRequest,
  BackendWriter,
  backendKeyData,
  ClientGone,
  ClientStalled,
  errorResponse,
  parameterStatus,
  readyForQuery,
} from './backend-messages.js';
import { type CancelKeys, StatementInterrupts } from './cancel.js';
import { ExtendedQuery } from './extended-query.js';
import {
  type Frame,
  FrontendFraming,
  MessageReader,
  ProtocolViolation,
  typeName,
} from './frontend-framing.js';
import { SessionSettings } from './session-settings.js';
import { simpleQuery } from './simple-query.js';
import { errorFields, SQLSTATE, WireError } from './sql-errors.js';
import { type PasswordCheck, readStartupPacket, startupOptions } from './startup.js';
import { type SessionDeps, SessionEnded, WireSession } from './wire-session.js';

/**
 * One client connection: bytes in, frames (frontend-framing.ts), the start-up and
 * authentication, then each message in order to the session; answers out through one
 * writer. Input is read only as fast as messages are handled: past a few queued frames the
 * socket is paused, so a client that pipelines without reading cannot fill memory.
 */

export interface ConnectionDeps extends SessionDeps {
  passwords: PasswordCheck;
  cancelKeys: CancelKeys;
  tls: SecureContext | undefined;
  /** The largest message kept in memory; larger ones are refused with an error. */
  maxMessageBytes: number;
  /** How long a client may take to authenticate. */
  startupTimeoutMs: number;
  /** How long a client may read nothing while an answer waits (the HTTP answers' limit). */
  stallMs: number;
}

/** Frames waiting before the socket is paused. */
const MAX_QUEUED_FRAMES = 32;

const CODE = { query: 0x51, terminate: 0x58, password: 0x70 } as const;

export class WireConnection {
  private socket: Socket;
  private writer: BackendWriter;
  private readonly framing: FrontendFraming;
  private readonly queue: Frame[] = [];
  private working = false;
  private paused = false;
  private ended = false;
  private phase: 'startup' | 'password' | 'ready' = 'startup';
  private startup: { user: string; settings: SessionSettings } | undefined;
  private session: WireSession | undefined;
  private extended: ExtendedQuery | undefined;
  private readonly interrupts = new StatementInterrupts();
  private releaseKey: (() => void) | undefined;
  private readonly startupTimer: NodeJS.Timeout;
  private readonly closedPromise: Promise<void>;

  constructor(
    socket: Socket,
    private readonly deps: ConnectionDeps,
  ) {
    this.socket = socket;
    this.writer = new BackendWriter(socket, deps.stallMs);
    this.framing = new FrontendFraming(deps.maxMessageBytes);
    this.closedPromise = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('close', () => this.cleanUp());
    this.startupTimer = setTimeout(
      () => this.fatal(new WireError('08006', 'timeout expired before authentication', { fatal: true })),
      deps.startupTimeoutMs,
    );
    this.listen(socket);
  }

  /** Resolves once the socket has closed. */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  /** Shutdown: the client is told, its statement's connection let go, the socket closed. */
  terminate(): void {
    this.fatal(
      new WireError(SQLSTATE.adminShutdown, 'terminating connection due to administrator command', {
        fatal: true,
      }),
    );
  }

  private listen(socket: Socket): void {
    socket.on('data', (data: Buffer) => this.received(data));
    socket.on('error', () => undefined); // 'close' follows
  }

  private received(data: Buffer): void {
    if (this.ended) return;
    try {
      this.queue.push(...this.framing.push(data));
    } catch (error) {
      this.fatal(error);
      return;
    }
    if (this.queue.length > MAX_QUEUED_FRAMES || this.framing.pendingBytes > 2 * this.deps.maxMessageBytes) {
      this.paused = true;
      this.socket.pause();
    }
    void this.work();
  }

  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (!this.ended && this.queue.length > 0) {
        const frame = this.queue.shift() as Frame;
        await this.handle(frame);
        await this.writer.drain();
        if (this.paused && this.queue.length < MAX_QUEUED_FRAMES / 2) {
          this.paused = false;
          this.socket.resume();
        }
      }
    } catch (error) {
      this.fatal(error);
    } finally {
      this.working = false;
      if (this.ended) this.interrupts.end();
    }
  }

  private async handle(frame: Frame): Promise<void> {
    if (frame.kind === 'startup') return this.handleStartup(frame.body);
    if (frame.kind === 'oversized') return this.oversized(frame.type, frame.bytes);
    if (this.phase === 'password') {
      if (frame.type !== CODE.password)
        throw new ProtocolViolation(`expected a password message, got message type ${typeName(frame.type)}`);
      return this.authenticate(frame.body);
    }
    if (frame.type === CODE.terminate) {
      this.end();
      return;
    }
    const session = this.session as WireSession;
    if (frame.type === CODE.query) {
      const reader = new MessageReader(frame.body);
      const text = reader.cstring();
      reader.end();
      await simpleQuery(session, text);
      readyForQuery(this.writer, session.status);
      this.writer.flush();
      return;
    }
    if (await (this.extended as ExtendedQuery).handle(frame.type, frame.body)) return;
    throw new ProtocolViolation(`invalid frontend message type ${typeName(frame.type)}`);
  }

  /** A message too large to keep: an error, and the connection goes on (the protocol's framing is intact). */
  private oversized(type: number, bytes: number): void {
    if (this.phase !== 'ready') throw new ProtocolViolation(`message of ${bytes} bytes during start-up`);
    const session = this.session as WireSession;
    session.fail(
      new WireError(
        SQLSTATE.programLimit,
        `message of ${bytes} bytes is larger than the ${this.deps.maxMessageBytes} bytes this server accepts`,
      ),
    );
    if (type === CODE.query) {
      readyForQuery(this.writer, session.status);
      this.writer.flush();
    } else this.extended?.skipToSync();
  }

  private async handleStartup(body: Buffer): Promise<void> {
    if (this.phase !== 'startup') throw new ProtocolViolation('unexpected start-up packet');
    const packet = readStartupPacket(body);
    if (packet.kind === 'cancel') {
      this.deps.cancelKeys.cancel(packet.processId, packet.secret);
      this.end();
      return;
    }
    if (packet.kind === 'ssl' || packet.kind === 'gssenc') {
      const tls = packet.kind === 'ssl' ? this.deps.tls : undefined;
      this.writer.byte(tls ? 0x53 : 0x4e); // S or N
      this.writer.flush();
      // Bytes sent before the handshake would be read as if encrypted (CVE-2021-23222).
      if (this.framing.pendingBytes > 0 || this.queue.length > 0)
        throw new ProtocolViolation('received unencrypted data after SSL request');
      if (tls) await this.upgrade(tls);
      return;
    }
    const user = packet.parameters.get('user');
    if (!user)
      throw new WireError('28000', 'no PostgreSQL user name specified in startup packet', { fatal: true });
    if (packet.parameters.get('replication') && packet.parameters.get('replication') !== 'false')
      throw new WireError(SQLSTATE.featureNotSupported, 'replication connections are not supported', {
        fatal: true,
      });
    const settings = new SessionSettings(user);
    try {
      for (const [name, value] of packet.parameters) {
        if (name === 'user' || name === 'database' || name === 'replication' || name.startsWith('_pq_'))
          continue;
        if (name === 'options') for (const [option, v] of startupOptions(value)) settings.set(option, v);
        else settings.set(name, value);
      }
    } catch (error) {
      if (error instanceof WireError) throw error;
      throw new WireError(errorFields(error).code, (error as Error).message, { fatal: true });
    }
    settings.takeChanges();
    this.startup = { user, settings };
    this.framing.started();
    this.phase = 'password';
    authenticationRequest(this.writer, 3); // AuthenticationCleartextPassword
    this.writer.flush();
  }

  private async upgrade(context: SecureContext): Promise<void> {
    const plain = this.socket;
    plain.removeAllListeners('data');
    const secure = new TLSSocket(plain, { isServer: true, secureContext: context });
    await new Promise<void>((resolve, reject) => {
      secure.once('secure', resolve);
      secure.once('error', reject);
    });
    this.socket = secure;
    this.writer = new BackendWriter(secure, this.deps.stallMs);
    this.listen(secure);
    secure.once('close', () => plain.destroy());
  }

  private async authenticate(body: Buffer): Promise<void> {
    const reader = new MessageReader(body);
    const password = reader.cstring();
    reader.end();
    const { user, settings } = this.startup as { user: string; settings: SessionSettings };
    const address = this.socket.remoteAddress ?? 'unknown';
    const identity = await this.deps.passwords.verify(address, user, password);
    clearTimeout(this.startupTimer);
    this.begin(identity.account, settings);
  }

  private begin(account: Account, settings: SessionSettings): void {
    const key = this.deps.cancelKeys.register(this.interrupts);
    this.releaseKey = key.release;
    this.session = new WireSession(account, settings, this.writer, this.interrupts, this.deps, key.processId);
    const extended = new ExtendedQuery(this.session);
    this.extended = extended;
    this.session.onDiscard = () => extended.reset();
    this.phase = 'ready';
    const w = this.writer;
    authenticationRequest(w, 0); // AuthenticationOk
    for (const [name, value] of settings.reported()) parameterStatus(w, name, value);
    backendKeyData(w, key.processId, key.secret);
    readyForQuery(w, 'I');
    w.flush();
  }

  /** Sends a FATAL error when there is one to send, then closes. */
  private fatal(error: unknown): void {
    if (this.ended) return;
    if (!(error instanceof SessionEnded || error instanceof ClientGone || error instanceof ClientStalled)) {
      const fields =
        error instanceof ProtocolViolation
          ? { severity: 'FATAL' as const, code: SQLSTATE.protocolViolation, message: error.message }
          : { ...errorFields(error), severity: 'FATAL' as const };
      if (fields.code === SQLSTATE.internal)
        this.deps.logger.error({ err: error }, 'postgres wire: connection failed');
      try {
        const w = new BackendWriter(this.socket, this.deps.stallMs);
        errorResponse(w, fields);
        w.flush();
      } catch {
        // The socket is gone.
      }
    }
    this.end(error instanceof ClientStalled);
  }

  private end(destroy = false): void {
    if (this.ended) return;
    this.ended = true;
    this.cleanUp();
    if (destroy) this.socket.destroy();
    else this.socket.end();
    // A client that does not close its side is not waited for.
    setTimeout(() => this.socket.destroy(), 1_000).unref();
  }

  private cleanUp(): void {
    this.ended = true;
    clearTimeout(this.startupTimer);
    // A statement still running for a client that left is stopped.
    this.interrupts.cancel();
    if (!this.working) this.interrupts.end();
    this.extended?.reset();
    this.session?.closeAllPortals();
    this.releaseKey?.();
    this.releaseKey = undefined;
  }
}

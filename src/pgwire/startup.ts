import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Identity, KeyStore } from '../auth/key-store.js';
import { MessageReader, ProtocolViolation } from './frontend-framing.js';
import { SQLSTATE, WireError } from './sql-errors.js';

/**
 * The start of a connection: the first packet (SSLRequest, GSSENCRequest, CancelRequest or
 * the StartupMessage with the user and options), then the password, which is the API key.
 * The user name is only a label (psql asks for one): the key alone says who connects.
 */

const PROTOCOL_3_0 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

/** Start-up parameters a client may send: more is not a real client. */
const MAX_PARAMETERS = 64;

export type StartupPacket =
  | { kind: 'ssl' }
  | { kind: 'gssenc' }
  | { kind: 'cancel'; processId: number; secret: Buffer }
  | { kind: 'startup'; minor: number; parameters: Map<string, string> };

export function readStartupPacket(body: Buffer): StartupPacket {
  const reader = new MessageReader(body);
  const code = reader.int32();
  if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
    reader.end();
    return { kind: code === SSL_REQUEST ? 'ssl' : 'gssenc' };
  }
  if (code === CANCEL_REQUEST) {
    const processId = reader.int32();
    const secret = Buffer.from(reader.bytes(4));
    reader.end();
    return { kind: 'cancel', processId, secret };
  }
  const major = code >> 16;
  if (major !== 3)
    throw new WireError(
      SQLSTATE.featureNotSupported,
      `unsupported frontend protocol ${major}.${code & 0xffff}: server supports 3.0 to 3.0`,
      { fatal: true },
    );
  const parameters = new Map<string, string>();
  for (;;) {
    const name = reader.cstring();
    if (name === '') break;
    if (parameters.size >= MAX_PARAMETERS) throw new ProtocolViolation('too many start-up parameters');
    parameters.set(name, reader.cstring());
  }
  reader.end();
  return { kind: 'startup', minor: code & 0xffff, parameters };
}

export const PROTOCOL_VERSION = PROTOCOL_3_0;

/**
 * `options` of the start-up packet, as libpq's PGOPTIONS writes them: `-c name=value`,
 * `-cname=value` or `--name=value`, separated by spaces (a backslash keeps a space).
 */
export function startupOptions(options: string): [string, string][] {
  const words: string[] = [];
  let current = '';
  for (let i = 0; i < options.length; i++) {
    const c = options[i] as string;
    if (c === '\\' && i + 1 < options.length) current += options[++i];
    else if (/\s/.test(c)) {
      if (current) words.push(current);
      current = '';
    } else current += c;
  }
  if (current) words.push(current);
  const pairs: [string, string][] = [];
  for (let i = 0; i < words.length; i++) {
    let word = words[i] as string;
    if (word === '-c') word = words[++i] ?? '';
    else if (word.startsWith('-c')) word = word.slice(2);
    else if (word.startsWith('--')) word = word.slice(2);
    else
      throw new WireError(
        SQLSTATE.protocolViolation,
        `invalid command-line argument for server process: ${word}`,
        { fatal: true },
      );
    const eq = word.indexOf('=');
    if (eq <= 0)
      throw new WireError(SQLSTATE.protocolViolation, `invalid start-up option: ${word}`, { fatal: true });
    pairs.push([word.slice(0, eq).replaceAll('-', '_'), word.slice(eq + 1)]);
  }
  return pairs;
}

const WINDOW_SECONDS = 60;
/** Pairs of address and key seen authenticating, most recent last. */
const MAX_KNOWN_PAIRS = 10_000;

/**
 * The password check, with the failed-authentication limit per client address
 * (AUTH_FAILURE_LIMIT per minute, the HTTP API's rule, counted for this listener): while an
 * address is over it, the keys it sends are not checked, except a key that authenticated from
 * that address before.
 */
export class PasswordCheck {
  private readonly failures: RateLimiterMemory | undefined;
  private readonly known = new Set<string>();

  constructor(
    private readonly keys: KeyStore,
    private readonly limit: number | undefined,
  ) {
    this.failures =
      limit === undefined ? undefined : new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS });
  }

  /** The key's identity; throws the FATAL answer for a wrong key or a blocked address. */
  async verify(address: string, user: string, password: string): Promise<Identity> {
    const identity = this.keys.identify(password);
    const pair = identity ? `${address}\u0000${identity.keyId}` : '';
    if (this.failures && !(identity && this.known.has(pair))) {
      const state = await this.failures.get(address);
      if (state && state.remainingPoints <= 0) throw this.blocked(state.msBeforeNext);
    }
    if (!identity) {
      if (this.failures) {
        try {
          await this.failures.consume(address);
        } catch (error) {
          if (!(error instanceof RateLimiterRes)) throw error;
        }
      }
      throw new WireError(SQLSTATE.invalidPassword, `password authentication failed for user "${user}"`, {
        fatal: true,
        hint: 'the password is an API key of this service',
      });
    }
    if (this.failures) {
      this.known.add(pair);
      if (this.known.size > MAX_KNOWN_PAIRS) this.known.delete(this.known.values().next().value as string);
    }
    return identity;
  }

  private blocked(msBeforeNext: number): WireError {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new WireError(
      '28000',
      `too many failed authentications from this address: at most ${this.limit} per minute; retry in ${seconds} s`,
      { fatal: true },
    );
  }
}

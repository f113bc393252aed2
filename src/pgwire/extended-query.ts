import {
  commandComplete,
  emptyMessage,
  MESSAGE,
  parameterDescription,
  readyForQuery,
  rowDescription,
} from './backend-messages.js';
import { MessageReader, ProtocolViolation } from './frontend-framing.js';
import { OID, pgTypeOf } from './pg-types.js';
import { fieldDescriptions, type Portal } from './portal.js';
import type { StatementShape, WireParameter } from './run-statement.js';
import { type SessionCommand, sessionCommand } from './session-commands.js';
import { endsFailedBlock, inFailedTransaction } from './simple-query.js';
import { SQLSTATE, WireError } from './sql-errors.js';
import { splitStatements } from './sql-text.js';
import { type PlannedQuery, SessionEnded, type WireSession } from './wire-session.js';

/**
 * The extended query protocol: Parse (a prepared statement, named or not, with `$n`
 * parameters), Bind (a portal: the statement with values bound, never spliced into SQL),
 * Describe, Execute (with a row limit: the portal is suspended and resumed), Close, Sync,
 * Flush. After an error every message up to Sync is skipped, as PostgreSQL does.
 */

interface PreparedWireStatement {
  text: string;
  /** What the statement is: nothing (an empty query), a session command, or a query. */
  command: SessionCommand | undefined;
  planned: PlannedQuery | undefined;
  parameterOids: number[];
  shape?: StatementShape;
}

/** A portal of this protocol: a query's result, or a command run at Execute. */
type WirePortal =
  | { kind: 'result'; portal: Portal; completed: boolean }
  | { kind: 'command'; command: SessionCommand }
  | { kind: 'empty' };

export class ExtendedQuery {
  private readonly statements = new Map<string, PreparedWireStatement>();
  private readonly portals = new Map<string, WirePortal>();
  private skipping = false;

  constructor(private readonly session: WireSession) {}

  /** Handles one message of the protocol; false when the type is not one of its own. */
  async handle(type: number, body: Buffer): Promise<boolean> {
    const letter = String.fromCharCode(type);
    if (!'PBDECSH'.includes(letter)) return false;
    if (letter === 'S') {
      this.sync();
      return true;
    }
    if (letter === 'H') {
      this.session.writer.flush();
      return true;
    }
    if (this.skipping) return true;
    const reader = new MessageReader(body);
    try {
      if (letter === 'P') await this.parse(reader);
      else if (letter === 'B') await this.bind(reader);
      else if (letter === 'D') await this.describe(reader);
      else if (letter === 'E') await this.execute(reader);
      else if (letter === 'C') this.close(reader);
    } catch (error) {
      if (error instanceof SessionEnded || error instanceof ProtocolViolation) throw error;
      this.session.fail(error);
      this.skipping = true;
    }
    return true;
  }

  /** After an error answered elsewhere (a message too large): the rest of the cycle is skipped. */
  skipToSync(): void {
    this.skipping = true;
  }

  /** Forgets every statement and portal (DISCARD ALL, the end of the session). */
  reset(): void {
    for (const name of [...this.portals.keys()]) this.dropPortal(name);
    this.statements.clear();
  }

  private async parse(reader: MessageReader): Promise<void> {
    const name = reader.cstring();
    const text = reader.cstring();
    const count = reader.int16();
    const parameterOids: number[] = [];
    for (let i = 0; i < count; i++) parameterOids.push(reader.int32());
    reader.end();
    if (name !== '' && this.statements.has(name))
      throw new WireError(SQLSTATE.duplicatePreparedStatement, `prepared statement "${name}" already exists`);
    const pieces = splitStatements(text);
    if (pieces.length > 1)
      throw new WireError(SQLSTATE.syntax, 'cannot insert multiple commands into a prepared statement');
    const piece = pieces[0];
    const command = piece ? sessionCommand(piece) : undefined;
    if (this.session.transaction === 'failed' && !endsFailedBlock(command)) throw inFailedTransaction();
    const planned = piece && !command ? await this.session.plan(piece, true) : undefined;
    this.statements.set(name, { text, command, planned, parameterOids });
    emptyMessage(this.session.writer, MESSAGE.parseComplete);
  }

  private async bind(reader: MessageReader): Promise<void> {
    const portalName = reader.cstring();
    const statementName = reader.cstring();
    const formatCount = reader.int16();
    const formats: number[] = [];
    for (let i = 0; i < formatCount; i++) formats.push(reader.int16());
    const valueCount = reader.int16();
    if (formatCount > 1 && formatCount !== valueCount)
      throw new ProtocolViolation(
        `bind message has ${formatCount} parameter formats but ${valueCount} parameters`,
      );
    const statement = this.statement(statementName);
    const parameters: WireParameter[] = [];
    for (let i = 0; i < valueCount; i++) {
      const length = reader.int32();
      const raw = length === -1 ? null : reader.bytes(length);
      const format =
        formatCount === 0 ? 0 : formatCount === 1 ? (formats[0] as number) : (formats[i] as number);
      parameters.push({ raw, format, oid: statement.parameterOids[i] ?? 0 });
    }
    const resultFormatCount = reader.int16();
    const resultFormats: number[] = [];
    for (let i = 0; i < resultFormatCount; i++) resultFormats.push(reader.int16());
    reader.end();
    if (portalName !== '' && this.portals.has(portalName))
      throw new WireError(SQLSTATE.duplicateCursor, `portal "${portalName}" already exists`);
    if (this.session.transaction === 'failed' && !endsFailedBlock(statement.command))
      throw inFailedTransaction();
    this.dropPortal(portalName);
    this.portals.set(portalName, await this.openPortal(statement, parameters, resultFormats));
    emptyMessage(this.session.writer, MESSAGE.bindComplete);
  }

  private async openPortal(
    statement: PreparedWireStatement,
    parameters: WireParameter[],
    formats: number[],
  ): Promise<WirePortal> {
    const planned = statement.planned ?? showAsRows(this.session, statement.command);
    if (planned) {
      this.session.interrupts.begin(this.session.timeoutMs);
      try {
        return {
          kind: 'result',
          portal: await this.session.open(planned, parameters, formats),
          completed: false,
        };
      } finally {
        this.session.interrupts.end();
      }
    }
    if (parameters.length > 0)
      throw new WireError(
        SQLSTATE.protocolViolation,
        `bind message supplies ${parameters.length} parameters, but prepared statement requires 0`,
      );
    return statement.command ? { kind: 'command', command: statement.command } : { kind: 'empty' };
  }

  private async describe(reader: MessageReader): Promise<void> {
    const kind = String.fromCharCode(reader.byte());
    const name = reader.cstring();
    reader.end();
    const w = this.session.writer;
    if (kind === 'S') {
      const statement = this.statement(name);
      const shape = await this.shapeOf(statement);
      parameterDescription(
        w,
        shape.parameterTypes.map((type, i) => {
          const given = statement.parameterOids[i] ?? 0;
          return given !== 0 ? given : type ? pgTypeOf(type).oid : OID.text;
        }),
      );
      if (shape.columns.length === 0) emptyMessage(w, MESSAGE.noData);
      else rowDescription(w, fieldDescriptions(shape.columns, []));
      return;
    }
    if (kind !== 'P') throw new ProtocolViolation(`invalid DESCRIBE message subtype ${kind}`);
    const portal = this.portals.get(name);
    if (!portal) throw new WireError(SQLSTATE.invalidCursorName, `portal "${name}" does not exist`);
    if (portal.kind === 'result') portal.portal.writeDescription(w);
    else emptyMessage(w, MESSAGE.noData);
  }

  private async shapeOf(statement: PreparedWireStatement): Promise<StatementShape> {
    if (statement.shape) return statement.shape;
    const planned = statement.planned ?? showAsRows(this.session, statement.command);
    let shape: StatementShape = { parameterTypes: [], columns: [] };
    if (planned?.kind === 'data' || planned?.kind === 'catalog') {
      this.session.interrupts.begin(this.session.timeoutMs);
      try {
        shape = await this.session.describe(planned, statement.parameterOids);
      } finally {
        this.session.interrupts.end();
      }
    } else if (planned?.kind === 'rows') {
      const portal = await this.session.open(planned, [], []);
      shape = { parameterTypes: [], columns: portal.columns };
      portal.close();
    }
    statement.shape = shape;
    return shape;
  }

  private async execute(reader: MessageReader): Promise<void> {
    const name = reader.cstring();
    const maxRows = reader.int32();
    reader.end();
    const portal = this.portals.get(name);
    if (!portal) throw new WireError(SQLSTATE.invalidCursorName, `portal "${name}" does not exist`);
    const w = this.session.writer;
    if (portal.kind === 'empty') return emptyMessage(w, MESSAGE.emptyQuery);
    if (portal.kind === 'command') {
      if (this.session.transaction === 'failed' && !endsFailedBlock(portal.command))
        throw inFailedTransaction();
      return this.session.command(portal.command);
    }
    if (this.session.transaction === 'failed') throw inFailedTransaction();
    if (portal.completed) return commandComplete(w, 'SELECT 0');
    this.session.interrupts.begin(this.session.timeoutMs);
    try {
      const { rows, done } = await portal.portal.fetch(w, maxRows);
      if (done) {
        portal.completed = true;
        commandComplete(w, `SELECT ${rows}`);
      } else emptyMessage(w, MESSAGE.portalSuspended);
    } finally {
      this.session.interrupts.end();
    }
  }

  private close(reader: MessageReader): void {
    const kind = String.fromCharCode(reader.byte());
    const name = reader.cstring();
    reader.end();
    if (kind === 'S') this.statements.delete(name);
    else if (kind === 'P') this.dropPortal(name);
    else throw new ProtocolViolation(`invalid CLOSE message subtype ${kind}`);
    emptyMessage(this.session.writer, MESSAGE.closeComplete);
  }

  /** The end of a cycle: outside a transaction block its portals close; ReadyForQuery. */
  private sync(): void {
    this.skipping = false;
    if (this.session.transaction === 'idle')
      for (const name of [...this.portals.keys()]) this.dropPortal(name);
    readyForQuery(this.session.writer, this.session.status);
    this.session.writer.flush();
  }

  private statement(name: string): PreparedWireStatement {
    const statement = this.statements.get(name);
    if (!statement)
      throw new WireError(
        SQLSTATE.undefinedPreparedStatement,
        name === ''
          ? 'unnamed prepared statement does not exist'
          : `prepared statement "${name}" does not exist`,
      );
    return statement;
  }

  private dropPortal(name: string): void {
    const portal = this.portals.get(name);
    if (portal?.kind === 'result') portal.portal.close();
    this.portals.delete(name);
  }
}

/** SHOW through the extended protocol: its rows are a result, described like a query's. */
function showAsRows(session: WireSession, command: SessionCommand | undefined): PlannedQuery | undefined {
  if (command?.kind === 'show') {
    const { column, value } = session.settings.show(command.name);
    return { kind: 'rows', columns: [column], rows: [[value]] };
  }
  if (command?.kind === 'show-all')
    return {
      kind: 'rows',
      columns: ['name', 'setting'],
      rows: session.settings.all().map((s) => [s.name, s.setting]),
    };
  return undefined;
}

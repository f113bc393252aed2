import { BackendWriter, commandComplete, emptyMessage, MESSAGE, memorySink } from './backend-messages.js';
import type { Portal } from './portal.js';
import { type SessionCommand, sessionCommand } from './session-commands.js';
import { SQLSTATE, WireError } from './sql-errors.js';
import { type Statement, splitStatements } from './sql-text.js';
import { SessionEnded, type WireSession } from './wire-session.js';

/**
 * The simple query protocol: a Query message's string, which may hold several statements,
 * each run in turn; the first that fails ends the string (as PostgreSQL's implicit
 * transaction does). Results are always text. The caller sends ReadyForQuery.
 */

export async function simpleQuery(session: WireSession, text: string): Promise<void> {
  // A Query closes the unnamed portal, as in PostgreSQL.
  session.closePortal('');
  const statements = splitStatements(text);
  if (statements.length === 0) {
    emptyMessage(session.writer, MESSAGE.emptyQuery);
    return;
  }
  for (const statement of statements) {
    session.interrupts.begin(session.timeoutMs);
    try {
      await runStatementText(session, statement);
    } catch (error) {
      if (error instanceof SessionEnded) throw error;
      session.fail(error, statement.offset);
      return;
    } finally {
      session.interrupts.end();
    }
  }
}

/** Whether a command may run in a failed transaction block (it ends the block). */
export function endsFailedBlock(command: SessionCommand | undefined): boolean {
  return (
    command?.kind === 'commit' ||
    command?.kind === 'rollback' ||
    (command?.kind === 'savepoint' && command.tag === 'ROLLBACK')
  );
}

export const inFailedTransaction = () =>
  new WireError(
    SQLSTATE.inFailedTransaction,
    'current transaction is aborted, commands ignored until end of transaction block',
  );

async function runStatementText(session: WireSession, statement: Statement): Promise<void> {
  const command = sessionCommand(statement);
  if (session.transaction === 'failed' && !endsFailedBlock(command)) throw inFailedTransaction();
  if (command) return session.command(command);
  const planned = await session.plan(statement, false);
  const constant = planned.kind === 'data' && planned.constant === true;
  const kept = constant ? session.deps.cache.answer(statement.text) : undefined;
  if (kept) {
    session.writer.bytes(kept);
    return;
  }
  // A constant answer is written in memory first, then kept and sent.
  const sink = constant ? memorySink() : undefined;
  const writer = sink ? new BackendWriter(sink, 0) : session.writer;
  const portal: Portal = await session.open(planned, [], []);
  try {
    portal.writeDescription(writer);
    const { rows } = await portal.fetch(writer, 0);
    commandComplete(writer, `SELECT ${rows}`);
  } finally {
    portal.close();
  }
  if (sink) {
    writer.flush();
    const answer = sink.bytes();
    session.deps.cache.keepAnswer(statement.text, answer);
    session.writer.bytes(answer);
  }
}

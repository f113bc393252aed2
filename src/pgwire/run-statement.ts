import type { DuckDBDataChunk, DuckDBType } from '@duckdb/node-api';
import type { Account } from '../auth/account.js';
import type { Database, ResultColumnType } from '../storage/database.js';
import type { StatementInterrupts } from './cancel.js';
import { parameterValue } from './parameter-values.js';
import { SQLSTATE, WireError } from './sql-errors.js';

/**
 * Where every statement of the Postgres wire protocol runs on DuckDB: the one function that
 * takes users' (already sandboxed) SQL to the database. It runs on a connection of its own
 * (`Database.dedicated`), interruptible by a CancelRequest and the statement timeout, and
 * hands the caller a result read chunk by chunk as DuckDB produces it. The connection is held
 * until `use` returns: for a portal or cursor, until it is closed. Per-key admission (the fair
 * lanes of the workload management, DESIGN §12) goes around `runStatement`, by `run.account`.
 */

/** A Bind message's parameter, as the client sent it. */
export interface WireParameter {
  raw: Buffer | null;
  /** 0 text, 1 binary. */
  format: number;
  /** The type the client named in Parse, 0 when it left it to the server. */
  oid: number;
}

export interface StatementRun {
  account: Account;
  /** The SQL to run: the sandbox's output, with `$n` for the parameters. */
  sql: string;
  parameters: readonly WireParameter[];
  interrupts: StatementInterrupts;
}

export interface OpenResult {
  columns: readonly ResultColumnType[];
  /** The next chunk of rows, or null at the end. */
  next(): Promise<DuckDBDataChunk | null>;
}

export async function runStatement<T>(
  database: Database,
  run: StatementRun,
  use: (result: OpenResult) => Promise<T>,
): Promise<T> {
  return database.dedicated(async (session) => {
    run.interrupts.attach(session);
    try {
      const prepared = await run.interrupts.guard(() => session.prepare(run.sql));
      try {
        const expected = prepared.parameterTypes.length;
        if (run.parameters.length !== expected) {
          throw new WireError(
            SQLSTATE.protocolViolation,
            `bind message supplies ${run.parameters.length} parameters, but prepared statement requires ${expected}`,
          );
        }
        const bound = run.parameters.map((p, i) =>
          parameterValue(p.raw, p.format, i, p.oid, prepared.parameterTypes[i]),
        );
        const stream = await run.interrupts.guard(() =>
          prepared.stream(
            bound.map((b) => b.value),
            bound.map((b) => b.type),
          ),
        );
        return await use({
          columns: stream.columns,
          next: () => run.interrupts.guard(() => stream.next()),
        });
      } finally {
        prepared.close();
      }
    } finally {
      run.interrupts.detach(session);
    }
  });
}

export interface StatementShape {
  parameterTypes: readonly (DuckDBType | undefined)[];
  /** A type undefined: it depends on a parameter's value (described as text). */
  columns: readonly { name: string; type: DuckDBType | undefined }[];
}

/** What a statement takes and returns, without running it (Describe of a prepared statement). */
export async function describeStatement(
  database: Database,
  sql: string,
  interrupts: StatementInterrupts,
): Promise<StatementShape> {
  return database.dedicated(async (session) => {
    interrupts.attach(session);
    try {
      const prepared = await interrupts.guard(() => session.prepare(sql));
      prepared.close();
      return { parameterTypes: prepared.parameterTypes, columns: prepared.columns };
    } finally {
      interrupts.detach(session);
    }
  });
}

import type { DuckDBDataChunk, DuckDBType } from '@duckdb/node-api';
import type { Account } from '../auth/account.js';
import type { Database, ResultColumnType } from '../storage/database.js';
import type { StatementInterrupts } from './cancel.js';
import { parameterValue, pgTypeToDuckDB } from './parameter-values.js';
import { type EncodedColumn, renderedInSql } from './row-encoding.js';
import { SQLSTATE, WireError } from './sql-errors.js';

/**
 * Where every statement of the Postgres wire protocol runs on DuckDB: the one function that
 * takes users' (already sandboxed) SQL to the database. It waits for a users' slot of the
 * caller's key (the fair lanes of the workload management, DESIGN §12: the same limits as
 * executions), then runs on a connection of its own (`Database.dedicated`), interruptible by a
 * CancelRequest and the statement timeout, and hands the caller a result read chunk by chunk
 * as DuckDB produces it. The slot and the connection are held until `use` returns: for a
 * portal or cursor, until it is closed.
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
  /** Result formats as Bind gave them (none: all text). */
  formats: readonly number[];
  interrupts: StatementInterrupts;
  /** Whether DuckDB writes the text of the columns it writes faster (renderingPlan); default yes. */
  renderInSql?: boolean;
}

export interface OpenResult {
  columns: readonly ResultColumnType[];
  /** Where each column is in the chunks (row-encoding.ts), when not at its own index. */
  sources?: readonly EncodedColumn['source'][];
  /** The next chunk of rows, or null at the end. */
  next(): Promise<DuckDBDataChunk | null>;
  /** Interrupts a chunk being read (a portal closed while it reads ahead). */
  stop?(): void;
}

/** Admission to a users' slot of the key (Executions.inUsersLane: the fair lanes of DESIGN §12). */
export type Lane = <T>(owner: string, work: () => Promise<T>) => Promise<T>;

export async function runStatement<T>(
  database: Database,
  lane: Lane,
  run: StatementRun,
  use: (result: OpenResult) => Promise<T>,
): Promise<T> {
  return lane(run.account.handle, () => dedicatedRun(database, run, use));
}

async function dedicatedRun<T>(
  database: Database,
  run: StatementRun,
  use: (result: OpenResult) => Promise<T>,
): Promise<T> {
  return database.dedicated(async (session) => {
    run.interrupts.attach(session);
    try {
      let prepared = await run.interrupts.guard(() => session.prepare(run.sql));
      const shown = prepared.columns;
      // A column typed by an untyped parameter (`SELECT $1 AS n`): DuckDB reports one placeholder
      // column until the values are bound; the stream's columns are the real ones then.
      const settled = shown.every((column) => column.type !== undefined);
      const rendering =
        settled && run.renderInSql !== false
          ? renderingPlan(run.sql, shown, resolveFormats(run.formats, shown.length))
          : undefined;
      if (rendering) {
        prepared.close();
        prepared = await run.interrupts.guard(() => session.prepare(rendering.sql));
      }
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
        const stop = () => session.interrupt();
        if (!rendering)
          return await use({
            columns: stream.columns,
            next: () => run.interrupts.guard(() => stream.next()),
            stop,
          });
        return await use({
          columns: shown.map((column, i) => ({
            name: column.name,
            type: column.type ?? (stream.columns[rendering.sources[i]?.raw ?? 0]?.type as DuckDBType),
          })),
          sources: rendering.sources,
          next: () => run.interrupts.guard(() => stream.next()),
          stop,
        });
      } finally {
        prepared.close();
      }
    } finally {
      run.interrupts.detach(session);
    }
  });
}

/** Result formats of a Bind (none: all text; one: all alike; else one per column). */
export function resolveFormats(formats: readonly number[], count: number): number[] {
  if (formats.some((f) => f !== 0 && f !== 1))
    throw new WireError(
      SQLSTATE.protocolViolation,
      `unsupported format code ${formats.find((f) => f !== 0 && f !== 1)}`,
    );
  if (formats.length === 0) return Array(count).fill(0);
  if (formats.length === 1) return Array(count).fill(formats[0]);
  if (formats.length !== count)
    throw new WireError(
      SQLSTATE.protocolViolation,
      `bind message has ${formats.length} result formats but query has ${count} columns`,
    );
  return [...formats];
}

/**
 * The query wrapped so that DuckDB writes the text of the columns whose text costs most in
 * JavaScript (row-encoding.ts, renderedInSql), beside their values; undefined when no text
 * column gains. One more prepare (0.1–0.3 ms), against 0.3–0.8 µs a value saved.
 */
function renderingPlan(
  sql: string,
  columns: readonly { name: string; type: DuckDBType | undefined }[],
  formats: readonly number[],
): { sql: string; sources: EncodedColumn['source'][] } | undefined {
  const items: string[] = [];
  const sources: EncodedColumn['source'][] = [];
  let gains = false;
  columns.forEach((column, i) => {
    const name = `pgw_${i + 1}`;
    const text = column.type && formats[i] === 0 ? renderedInSql(column.type, name) : undefined;
    const source: { raw?: number; text?: number } = {};
    if (text) {
      gains = true;
      source.text = items.push(text) - 1;
    }
    // Integers' text is never NULL where the value is not: no value needed beside it.
    if (!text || text.startsWith('CASE')) source.raw = items.push(name) - 1;
    sources.push(source);
  });
  if (!gains) return undefined;
  const names = columns.map((_, i) => `pgw_${i + 1}`).join(', ');
  return { sql: `SELECT ${items.join(', ')} FROM (${sql}) AS pgw_rows(${names})`, sources };
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
  parameterOids: readonly number[],
  interrupts: StatementInterrupts,
): Promise<StatementShape> {
  return database.dedicated(async (session) => {
    interrupts.attach(session);
    try {
      const prepared = await interrupts.guard(() => session.prepare(sql));
      const { parameterTypes, columns } = prepared;
      if (columns.every((column) => column.type !== undefined)) {
        prepared.close();
        return { parameterTypes, columns };
      }
      // Columns that depend on untyped parameters: bound to NULLs of the client's types (text
      // where it gave none), the statement is started, never read, to learn them.
      const nulls = parameterTypes.map((type, i) => parameterValue(null, 0, i, parameterOids[i] ?? 0, type));
      const stream = await interrupts.guard(() =>
        prepared.stream(
          nulls.map(() => null),
          nulls.map((n, i) => n.type ?? nullTypeFor(parameterOids[i] ?? 0)),
        ),
      );
      return { parameterTypes, columns: stream.columns };
    } finally {
      interrupts.detach(session);
    }
  });
}

/** The type a NULL is bound with for a parameter DuckDB could not type: the client's, or text. */
function nullTypeFor(oid: number): DuckDBType {
  return pgTypeToDuckDB(oid);
}

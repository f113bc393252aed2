import type { Database, InterruptibleSession, Session } from '../storage/database.js';
import { type Execution, type SnapshotColumn, STATES } from './execution.js';
import { jsonArrayBytes, jsonRowsQuery, resultBytesQuery } from './row-rendering.js';
import type { RunRequest } from './run-request.js';
import { runSmall, SMALL_ROWS, SmallShapes } from './small-result.js';
import {
  createSnapshot,
  cutToBytes,
  keepFirstRows,
  ResultOverCapError,
  type SnapshotSummary,
  type StoreMode,
  snapshotName,
  startCounter,
} from './snapshot.js';
import { rowCounter, type StoringWatch } from './storing-watch.js';

/**
 * Storing a run's result (DESIGN §5, §12): its rows as the execution's snapshot, then its
 * COMPLETED record written once it is seen; cut to the row cap or the byte cap as a partial result
 * when it passes one; watched by the storing watch while it is stored, and
 * stopped when told to (a cancel, the time limit, the byte cap, the disk's reserve).
 */

/** A run as the runner and the storing share it: what it runs, and what it has been told. */
export interface Running {
  execution: Execution;
  request: RunRequest;
  session?: InterruptibleSession;
  cancelled: boolean;
  timedOut: boolean;
  /** The storing watch found it past the byte cap: stored again, cut at this many rows. */
  cutAt?: number;
  /** The disk's free space fell under the reserve while it was stored. */
  overReserve: boolean;
  /** Interrupts again and again once the run is to stop, until it has. */
  stopping?: NodeJS.Timeout;
  done: Promise<void>;
}

/**
 * Stops a running execution's statement. DuckDB's interrupt stops the statement running at
 * that moment; one that reaches the connection between two statements (a cancel just after
 * the run began) stops nothing, and the next statement would run on. So it is repeated until
 * the run has ended (the runner clears it).
 */
export function stop(running: Running): void {
  running.session?.interrupt();
  running.stopping ??= setInterval(() => running.session?.interrupt(), 50);
  running.stopping.unref();
}

export interface RunResultsOptions {
  maxResultRows: number;
  /** Infinity: no byte cap (the operator's `refresh` command). */
  maxResultBytes: number;
  /** When a result ended at `from` expires. */
  expiry: (from: Date) => Date;
}

/**
 * A result of at most this many rows is rendered by the run, and its bytes
 * (total_result_set_bytes) counted from the rendering: one statement instead of the per-column
 * count, and the rows are at hand for the first page (`onFinished`). Larger results are
 * counted per column without being rendered (resultBytesQuery). Measured for `SELECT 1`: the
 * count cost 1.1 ms of a run's 6 ms, and the first page's own read 1.4 ms.
 */
const RENDERED_ROWS_MAX = SMALL_ROWS;

/** A stored result: the COMPLETED record, the rows rendered when few, and what writes its table when that is still to do. */
export interface StoredResult {
  execution: Execution;
  rows?: string[];
  /** A small result held in memory (small-result.ts): writes its table, in the record's transaction. */
  write?: (session: Session) => Promise<void>;
}

export class RunResults {
  /** Each storing watch slot's counter value after its last clean run: where the next run starts. */
  private readonly counted = new Map<number, bigint>();
  /** Which SQL texts gave small results last time, or are bounded by a LIMIT: those run in memory first. */
  private readonly shapes = new SmallShapes();

  constructor(
    private readonly database: Database,
    private readonly watch: StoringWatch | undefined,
    private readonly options: RunResultsOptions,
  ) {}

  /**
   * Stores the run's result: every row counted to the row cap; past the row cap, or past the
   * byte cap while stored (the storing watch), stored again cut, on a new connection (the
   * interrupted one may keep the interrupt for its next statement).
   */
  async store(running: Running, started: Execution): Promise<StoredResult> {
    let cutAt: number | undefined;
    for (;;) {
      try {
        return await this.database.dedicated(async (session) => {
          running.session = session;
          try {
            if (running.cancelled) throw new Error('cancelled before it started');
            const small = cutAt === undefined ? await this.storeSmall(running, started, session) : undefined;
            return small ?? (await this.storeOnce(running, started, session, cutAt));
          } finally {
            // The connection closes or serves another run when this returns: nothing may interrupt it after.
            running.session = undefined;
          }
        });
      } catch (error) {
        if (cutAt !== undefined || running.cancelled || running.timedOut || running.overReserve) throw error;
        if (error instanceof ResultOverCapError) cutAt = this.options.maxResultRows;
        else if (running.cutAt !== undefined) cutAt = running.cutAt;
        else throw error;
        clearInterval(running.stopping);
        running.stopping = undefined;
      }
    }
  }

  /**
   * A result whose SQL gave a small one last time, held in memory (small-result.ts); undefined
   * when it is not small now, and the run stores it the table's way.
   */
  private async storeSmall(
    running: Running,
    started: Execution,
    session: InterruptibleSession,
  ): Promise<StoredResult | undefined> {
    const sql = running.request.sql;
    if (!this.shapes.expectsSmall(sql)) return undefined;
    const { maxResultRows, maxResultBytes } = this.options;
    const small = await runSmall(session, started.id, sql, maxResultRows, maxResultBytes);
    if (this.mustStop(running, undefined)) throw new Error('interrupted');
    if (!small) {
      this.shapes.notSmall(sql);
      return undefined;
    }
    const endedAt = new Date();
    const execution: Execution = {
      ...started,
      state: STATES.completed,
      endedAt,
      expiresAt: this.options.expiry(endedAt),
      columns: small.columns,
      rowCount: small.rows.length,
      resultBytes: small.bytes,
    };
    return { execution, rows: small.rows, write: small.write };
  }

  /**
   * Stores the run's rows and returns its COMPLETED record, with the rows rendered when they
   * are few; on any failure the caller drops the table. The rows commit with the statement
   * that makes them, and the caller writes the record once the run is announced
   * (ExecutionStore.saveAfter): the run is seen completed from memory at once, and a write
   * transaction of our own (BEGIN, the record's INSERT, COMMIT: 2.5–3 ms of three round trips
   * for every run, half of a small query's cost in the service) is off its way. A crash
   * before the record lands leaves a table without a finished record, which the next start
   * drops (`Executions.open`), and the execution is then forgotten or, past its PENDING
   * record's delay, failed.
   */
  private async storeOnce(
    running: Running,
    started: Execution,
    session: InterruptibleSession,
    cutAt: number | undefined,
  ): Promise<StoredResult> {
    const slot = this.watch?.claimSlot();
    try {
      const sequence = slot === undefined ? undefined : rowCounter(slot);
      const known = slot === undefined ? undefined : this.counted.get(slot);
      if (slot !== undefined) this.counted.delete(slot);
      const counter = await startCounter(session, sequence, cutAt === undefined ? known : undefined);
      if (slot !== undefined) this.watchStoring(running, slot, counter.start, cutAt === undefined);
      const mode: StoreMode = cutAt === undefined ? { counter } : { cutAt };
      const snapshot = await createSnapshot(
        session,
        started.id,
        running.request.sql,
        this.options.maxResultRows,
        mode,
      );
      // An interrupt that came between two statements stopped nothing: check.
      if (this.mustStop(running, cutAt)) throw new Error('interrupted');
      if (slot !== undefined && snapshot.counted !== undefined) this.counted.set(slot, snapshot.counted);
      const { rows, rowCount, bytes, truncated } = await this.measure(session, started.id, snapshot);
      if (this.mustStop(running, cutAt)) throw new Error('interrupted');
      this.shapes.note(running.request.sql, snapshot.columns, rowCount, truncated);
      const endedAt = new Date();
      const execution: Execution = {
        ...started,
        state: truncated ? STATES.completedPartial : STATES.completed,
        endedAt,
        expiresAt: this.options.expiry(endedAt),
        columns: snapshot.columns,
        rowCount,
        resultBytes: bytes,
      };
      return { execution, rows };
    } finally {
      if (slot !== undefined) this.watch?.release(started.id, slot);
    }
  }

  /**
   * The stored result's JSON bytes (total_result_set_bytes), cut to the byte cap where it
   * passes it. A small result is rendered, and its bytes counted from the rendering: one
   * statement instead of the per-column count, and the rows are at hand for the first page.
   * A large one is counted per column without being rendered.
   */
  private async measure(
    session: Session,
    executionId: string,
    snapshot: SnapshotSummary,
  ): Promise<{ rows?: string[]; rowCount: number; bytes: number; truncated: boolean }> {
    const table = snapshotName(executionId);
    const maxBytes = this.options.maxResultBytes;
    if (snapshot.rowCount <= RENDERED_ROWS_MAX) {
      let rows = (await session.query(jsonRowsQuery(table, snapshot.columns))).rows.map(
        (row) => row[0] as string,
      );
      let bytes = jsonArrayBytes(rows);
      if (bytes <= maxBytes)
        return { rows, rowCount: snapshot.rowCount, bytes, truncated: snapshot.truncated };
      rows = rowsWithin(rows, maxBytes);
      const rowCount = await keepFirstRows(session, table, rows.length);
      bytes = jsonArrayBytes(rows);
      return { rows, rowCount, bytes, truncated: true };
    }
    const bytes = await countBytes(session, table, snapshot.columns);
    if (bytes <= maxBytes) return { rowCount: snapshot.rowCount, bytes, truncated: snapshot.truncated };
    const rowCount = await cutToBytes(session, executionId, snapshot.columns, maxBytes);
    return { rowCount, bytes: await countBytes(session, table, snapshot.columns), truncated: true };
  }

  /** Whether the run was told to stop while a statement ran (the byte cap counts only while counted). */
  private mustStop(running: Running, cutAt: number | undefined): boolean {
    return (
      running.cancelled ||
      running.timedOut ||
      running.overReserve ||
      (cutAt === undefined && running.cutAt !== undefined)
    );
  }

  /** Tells the storing watch of the run; `capped`: told past the byte cap too (not once cut). */
  private watchStoring(running: Running, slot: number, start: bigint, capped: boolean): void {
    const overCap = (rowsThatFit: number) => {
      running.cutAt = rowsThatFit;
      stop(running);
    };
    this.watch?.track(
      {
        id: running.execution.id,
        limited: running.request.lane === 'users',
        ...(capped ? { overCap } : {}),
        overReserve: () => {
          running.overReserve = true;
          stop(running);
        },
      },
      slot,
      start,
    );
  }
}

/** The JSON bytes of a committed snapshot (total_result_set_bytes). */
async function countBytes(
  session: Session,
  table: string,
  columns: readonly SnapshotColumn[],
): Promise<number> {
  const [counted] = await session.all<{ bytes: bigint }>(resultBytesQuery(table, columns));
  return Number(counted?.bytes ?? 2);
}

/** The first rows whose JSON array fits in `maxBytes`. */
function rowsWithin(rows: string[], maxBytes: number): string[] {
  let bytes = 2;
  for (let i = 0; i < rows.length; i++) {
    bytes += Buffer.byteLength(rows[i] as string) + (i > 0 ? 1 : 0);
    if (bytes > maxBytes) return rows.slice(0, i);
  }
  return rows;
}

import type { Logger } from '../log.js';
import type { Database } from '../storage/database.js';
import { freeBytes } from '../storage/disk-space.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';

/**
 * Watches the results being stored (DESIGN §12), so that one run cannot fill DATA_DIR's disk
 * before its size is known. Every run counts its rows on a sequence of its own (a slot of
 * `_service.result_rows_<n>`), whose value DuckDB shows to other connections while the run's
 * transaction is still open; the database's used blocks grow as DuckDB writes the new table's
 * row groups, also before it commits (both measured on DuckDB 1.5.6, docs/library-notes.md).
 * Every `intervalMs` the watch reads both: the blocks added since the last look are shared out
 * between the runs in proportion to the rows each stored meanwhile, which gives each run an
 * estimate of the bytes it holds on disk. A users' run past the byte cap is told so (it is then
 * cut, as a partial result); when the disk's free space falls under the reserve, the users'
 * run holding the most is stopped.
 */

export interface StoringWatchOptions {
  /** A run of a users' query whose estimate passes this is over the cap. */
  maxResultBytes: number;
  /** Free bytes on the disk under `dataDir` that users' results may not take. */
  reserveBytes: number;
  dataDir: string;
  /** How many sequences to keep: runs storing at once at most. */
  slots: number;
  intervalMs?: number;
}

/** A run being stored, as the watch sees it. */
export interface Storing {
  id: string;
  /** Users' runs are held to the cap and the reserve; the operator's are only counted. */
  limited: boolean;
  /**
   * Past the byte cap: `rowsThatFit` of its rows would keep it under. Absent for a run stored
   * cut already (it is then held to the reserve only; the exact cut comes after it is stored).
   */
  overCap?: (rowsThatFit: number) => void;
  /** The disk's free space fell under the reserve while it was the largest run being stored. */
  overReserve: () => void;
}

interface Tracked extends Storing {
  slot: number;
  /** The sequence's value before the run's first row. */
  start: bigint;
  rows: bigint;
  bytes: number;
  /** Told already (overCap or overReserve): not again. */
  stopped: boolean;
}

/** The sequence a slot's runs count their rows on. */
export const rowCounter = (slot: number) => `${SERVICE_SCHEMA}.result_rows_${slot}`;

const DEFAULT_INTERVAL_MS = 250;

/**
 * The first look after a run starts storing comes this late, not at once: most runs (an
 * analyst's aggregate, a lookup, a join of a few tables) are stored by then and never cost a
 * look, which is a catalog read and a statfs competing with the run's own statement (issue 27:
 * 0.5–1 ms of a 2 ms query's run; 3.9–5.4 ms in the middle of a 60 ms one, on 2 cores). The
 * blocks a run writes before the watch's first look are not counted as its own: at most this
 * long of writing, tens of megabytes against a cap of 2 GB by default (MAX_RESULT_BYTES).
 */
const FIRST_LOOK_MS = 100;

export class StoringWatch {
  private readonly freeSlots: number[] = [];
  private readonly tracked = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | undefined;
  private firstLook: NodeJS.Timeout | undefined;
  private lastUsed: number | undefined;
  private sampling = false;

  constructor(
    private readonly database: Database,
    private readonly options: StoringWatchOptions,
    private readonly logger: Logger,
  ) {
    for (let slot = options.slots - 1; slot >= 0; slot--) this.freeSlots.push(slot);
  }

  /** Creates the slots' sequences (a database made with fewer slots gets the new ones). */
  async open(): Promise<void> {
    await this.database.write(async (session) => {
      for (let slot = 0; slot < this.options.slots; slot++)
        await session.run(`CREATE SEQUENCE IF NOT EXISTS ${rowCounter(slot)}`);
    });
  }

  /** Whether the disk's free space is under the reserve now: users' results may not start. */
  async belowReserve(): Promise<boolean> {
    const free = await freeBytes(this.options.dataDir);
    return free !== undefined && free < this.options.reserveBytes;
  }

  /** A slot for a run about to store its rows; undefined when every slot is taken. */
  claimSlot(): number | undefined {
    return this.freeSlots.pop();
  }

  /** Starts watching a run that counts its rows on `slot` from `start` (the value before its first row). */
  track(run: Storing, slot: number, start: bigint): void {
    this.tracked.set(run.id, { ...run, slot, start, rows: 0n, bytes: 0, stopped: false });
    if (this.timer) return;
    // A first look soon: the blocks used before it are not the runs' own (FIRST_LOOK_MS).
    this.firstLook = setTimeout(() => void this.sample(), FIRST_LOOK_MS);
    this.firstLook.unref();
    this.timer = setInterval(() => void this.sample(), this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.timer.unref();
  }

  /** The run is done storing (stored, failed or stopped): its slot is free again. */
  release(id: string, slot: number): void {
    this.tracked.delete(id);
    this.freeSlots.push(slot);
    if (this.tracked.size === 0) {
      clearTimeout(this.firstLook);
      clearInterval(this.timer);
      this.timer = undefined;
      this.lastUsed = undefined;
    }
  }

  /** The bytes a run is estimated to hold on disk now (0 before the first look). */
  estimate(id: string): number {
    return this.tracked.get(id)?.bytes ?? 0;
  }

  close(): void {
    clearTimeout(this.firstLook);
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async sample(): Promise<void> {
    if (this.sampling || this.tracked.size === 0 || this.database.isClosed) return;
    this.sampling = true;
    try {
      const { used, counters } = await this.read();
      this.share(used, counters);
      this.enforce(await freeBytes(this.options.dataDir));
    } catch (error) {
      this.logger.debug({ err: error }, 'could not look at the results being stored');
    } finally {
      this.sampling = false;
    }
  }

  private async read(): Promise<{ used: number; counters: Map<string, bigint> }> {
    const rows = await this.database.read((session) =>
      session.all<{ name: string; value: bigint | null; used: bigint }>(
        `SELECT sequence_name AS name, last_value AS value,
           (SELECT used_blocks * block_size FROM pragma_database_size() LIMIT 1) AS used
         FROM duckdb_sequences()
         WHERE schema_name = '${SERVICE_SCHEMA}' AND starts_with(sequence_name, 'result_rows_')`,
      ),
    );
    const counters = new Map(rows.map((row) => [`${SERVICE_SCHEMA}.${row.name}`, row.value ?? 0n]));
    return { used: Number(rows[0]?.used ?? 0), counters };
  }

  /** Shares the blocks added since the last look between the runs, by the rows each added. */
  private share(used: number, counters: ReadonlyMap<string, bigint>): void {
    const added = new Map<Tracked, bigint>();
    let allRows = 0n;
    for (const run of this.tracked.values()) {
      const rows = (counters.get(rowCounter(run.slot)) ?? run.start) - run.start;
      const more = rows > run.rows ? rows - run.rows : 0n;
      if (rows > run.rows) run.rows = rows;
      added.set(run, more);
      allRows += more;
    }
    const grown = this.lastUsed === undefined ? 0 : Math.max(0, used - this.lastUsed);
    this.lastUsed = used;
    if (allRows === 0n || grown === 0) return;
    for (const [run, more] of added) run.bytes += (grown * Number(more)) / Number(allRows);
  }

  private enforce(free: number | undefined): void {
    const limited = [...this.tracked.values()].filter((run) => run.limited && !run.stopped);
    for (const run of limited) {
      if (!run.overCap || run.bytes <= this.options.maxResultBytes) continue;
      run.stopped = true;
      const fit = Math.floor((Number(run.rows) * this.options.maxResultBytes) / run.bytes);
      run.overCap(Math.max(0, fit));
    }
    if (free === undefined || free >= this.options.reserveBytes) return;
    const largest = limited
      .filter((run) => !run.stopped)
      .reduce<Tracked | undefined>((a, b) => (a && a.bytes >= b.bytes ? a : b), undefined);
    if (!largest) return;
    largest.stopped = true;
    largest.overReserve();
  }
}

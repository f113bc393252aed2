import { type ApiError, ApiError as ApiErrorClass, badRequest } from '../errors.js';
import type { Database, InterruptibleSession, Session } from '../storage/database.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';
import { CsvReadError, InterruptedError, OutOfMemoryError } from '../storage/storage-error.js';
import {
  castExpression,
  convertExpression,
  doubleOf,
  fitsMask,
  type InferredType,
  shownType,
  sourceColumn,
  sqlType,
  typeFromFit,
} from './csv-column-types.js';
import { type CsvPart, type CsvSource, csvField, type LineEnd, readCsv } from './csv-dialect.js';
import { describeCsvProblem, dropRejects, firstRejectedLine } from './csv-rejects.js';
import { type FieldSource, readFields } from './field-source.js';
import {
  findWidenings,
  isWideningCandidate,
  pinnedMisfit,
  strictRefusal,
  type ValueCounts,
  type Widening,
} from './upload-typing.js';

/**
 * Loads an uploaded CSV into a staging table while it arrives, in one pass over the data.
 *
 * Types are inferred from the first part (the sample). Each later part is loaded, as soon as
 * it is on disk, by one INSERT … SELECT that converts every value and checks it against its
 * column's type rule (csv-column-types.ts): a value that does not fit is stored as NULL and
 * its column is named in a hidden column of the row, so the pass never stops. At the end, only when
 * some column had a misfit: a second pass infers the types of those columns alone over every
 * row, and the parts are loaded again with them. The staging table is committed under a name
 * no user table can have; the caller renames it over the target in a write transaction.
 *
 * It runs on a dedicated connection, not the writer: a slow client holds no lock, and a
 * client that leaves, or shutdown, interrupts the work.
 */

/** The prefix of staging tables: user table names start with a lowercase letter. */
export const STAGING_PREFIX = '__upload_';

/**
 * The hidden column of a row's misfits: the indexes of the columns whose text did not fit,
 * comma-separated (NULL: none). Its name starts with a digit, which no user column can.
 */
const MISFITS = quoteIdentifier('0 misfits');

export interface LoadedColumn {
  name: string;
  type: string;
}

export interface StagedTable {
  /** The staging table in the target namespace, committed. */
  staging: string;
  rowCount: number;
  columns: LoadedColumn[];
  /** Columns a few values made text (upload-typing.ts). */
  widened: Widening[];
  /**
   * Where the load's time went, for the log: each step as `name:start+duration` in ms from
   * the load's start (`infer`, `load` per statement with its MB, `widen`, `commit`).
   */
  steps: string;
}

export interface StagedLoadTarget {
  namespace: string;
  /** Unique per upload. */
  jobId: string;
  columnNames: readonly string[];
  format: 'csv' | 'ndjson';
  /** NDJSON: the JSON Pointer of each column's key. */
  pointers?: readonly string[];
}

/** What the client said about types (`strict`, `types`). */
export interface TypingOptions {
  /** Types the client gave, by column index. */
  pinned: ReadonlyMap<number, InferredType>;
  /** Refuse the upload rather than widen a column to text. */
  strict: boolean;
}

/** A column's inferred type, and the counts the widening report starts from. */
export interface ColumnInference {
  type: InferredType;
  counts: ValueCounts;
}

const castOf = (i: number) => quoteIdentifier(`t${i}`);
const convertedOf = (i: number) => quoteIdentifier(`v${i}`);

/**
 * The types of the columns `indexes` over every row of `source`, in one pass: the values
 * are unpivoted into (column, value) rows, so the query has a fixed number of aggregates
 * whatever the width (per-column aggregates measured superlinear: 1,000 columns × 2 rows
 * took 15 s and 3.7 GB, the unpivot 0.03 s).
 */
export async function inferColumnTypes(
  session: Session,
  source: FieldSource,
  indexes: readonly number[],
): Promise<Map<number, ColumnInference>> {
  const x = quoteIdentifier('x');
  const d = quoteIdentifier('d');
  const fits = fitsMask(x, d);
  const rows = await session.all<{
    col: number;
    mask: number;
    i: bigint | null;
    f: bigint | null;
    n: bigint;
    typed: bigint;
  }>(
    `SELECT col, bit_and(mask) AS mask, max(i) AS i, max(f) AS f, count(*) AS n, count(*) FILTER (WHERE mask <> 0) AS typed
       FROM (SELECT col, ${fits.mask} AS mask, ${fits.integerDigits} AS i, ${fits.fractionDigits} AS f
               FROM (SELECT col, ${x}, ${doubleOf(x)} AS ${d}
                       FROM (SELECT unnest([${indexes.join(', ')}]) AS col, unnest([${indexes.map(csvField).join(', ')}]) AS ${x}
                               FROM ${readFields(source)})
                      WHERE ${x} IS NOT NULL))
      GROUP BY col`,
  );
  const noValue = typeFromFit({ mask: undefined, maxIntegerDigits: 0, maxFractionDigits: 0 });
  const types = new Map<number, ColumnInference>(
    indexes.map((i) => [i, { type: noValue, counts: { values: 0, typed: 0 } }]),
  );
  for (const row of rows) {
    types.set(Number(row.col), {
      type: typeFromFit({
        mask: Number(row.mask),
        maxIntegerDigits: Number(row.i ?? 0),
        maxFractionDigits: Number(row.f ?? 0),
      }),
      counts: { values: Number(row.n), typed: Number(row.typed) },
    });
  }
  return types;
}

/** Column indexes whose type has a rule to check, and so may have misfits. */
function checkedColumns(types: readonly InferredType[]): number[] {
  return types.flatMap((type, i) => (type.kind === 'VARCHAR' ? [] : [i]));
}

/**
 * Above this many checked columns, a load converts each type's columns as one list, through
 * one lambda, instead of one expression per column: DuckDB's planning of per-column CASE
 * expressions grows faster than their number (measured: 0.5 ms a column at 256 columns,
 * 1.1 ms at 4,000, 3 ms at 5,000 with 10,000 in all), while the lambda costs ~130 ns more a
 * value, which only pays off when columns are many and rows few.
 */
const LIST_CONVERSION_COLUMNS = 512;

/**
 * The SELECT that converts a source's rows to the column types, followed by the row's
 * misfits (see MISFITS). Three projections: the casts a check needs, computed once; the
 * checked values; the misfits, from the text and the value.
 */
export function loadSelect(source: FieldSource, types: readonly InferredType[]): string {
  const checked = checkedColumns(types);
  if (checked.length > LIST_CONVERSION_COLUMNS) return listLoadSelect(source, types);
  const inner = types.map((type, i) => {
    const cast = castExpression(type, sourceColumn(i));
    return cast ? `${sourceColumn(i)}, ${cast} AS ${castOf(i)}` : sourceColumn(i);
  });
  const middle = types.map((type, i) =>
    type.kind === 'VARCHAR'
      ? sourceColumn(i)
      : `${sourceColumn(i)}, ${convertExpression(type, sourceColumn(i), castOf(i))} AS ${convertedOf(i)}`,
  );
  const misfit = (i: number) => `(${sourceColumn(i)} IS NOT NULL AND ${convertedOf(i)} IS NULL)`;
  const outer = types.map((type, i) => (type.kind === 'VARCHAR' ? sourceColumn(i) : convertedOf(i)));
  // The list is only built for the rare rows that have a misfit.
  if (checked.length > 0) {
    const names = checked.map((i) => `CASE WHEN ${misfit(i)} THEN '${i}' END`);
    outer.push(`CASE WHEN ${checked.map(misfit).join(' OR ')} THEN concat_ws(',', ${names.join(', ')}) END`);
  }
  return `SELECT ${outer.join(', ')} FROM (SELECT ${middle.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${readFields(source)}))`;
}

/** `loadSelect` for wide CSVs: the columns of each type converted as one list (see LIST_CONVERSION_COLUMNS). */
function listLoadSelect(source: FieldSource, types: readonly InferredType[]): string {
  const groups = new Map<string, number[]>();
  for (const i of checkedColumns(types)) {
    const type = types[i] as InferredType;
    const key = type.kind === 'NULL' ? 'NULL' : sqlType(type);
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  const x = quoteIdentifier('x');
  const position = quoteIdentifier('i');
  const inner = ['*'];
  const middle = ['*'];
  const misfits: string[] = [];
  const values = new Map<number, string>();
  [...groups.values()].forEach((columns, g) => {
    const type = types[columns[0] as number] as InferredType;
    const texts = `[${columns.map(sourceColumn).join(', ')}]`;
    const casts = quoteIdentifier(`casts ${g}`);
    const converted = quoteIdentifier(`values ${g}`);
    const cast = castExpression(type, x);
    if (cast) inner.push(`list_transform(${texts}, ${x} -> ${cast}) AS ${casts}`);
    const convert = convertExpression(type, x, `${casts}[${position}]`);
    middle.push(`list_transform(${texts}, (${x}, ${position}) -> ${convert}) AS ${converted}`);
    misfits.push(
      `list_filter(list_transform(${texts}, (${x}, ${position}) -> CASE WHEN ${x} IS NOT NULL AND ${converted}[${position}] IS NULL THEN [${columns.join(', ')}][${position}] END), m -> m IS NOT NULL)`,
    );
    for (const [k, column] of columns.entries()) values.set(column, `${converted}[${k + 1}]`);
  });
  const outer = types.map((_, i) => values.get(i) ?? sourceColumn(i));
  outer.push(`nullif(array_to_string(flatten([${misfits.join(', ')}]), ','), '')`);
  return `SELECT ${outer.join(', ')} FROM (SELECT ${middle.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${readFields(source)}))`;
}

/** A part of an upload and its size. */
export interface LoadPart extends CsvPart {
  bytes: number;
}

/** The parts of an upload, as they arrive. */
export interface PartFeed {
  /**
   * Resolves with the parts arrived since the last call once they hold at least `bytes`, or
   * with what is left once all have arrived: [] when nothing is.
   */
  next(bytes: number): Promise<LoadPart[]>;
  lineEnd(): LineEnd;
}

/**
 * Each load statement takes at least this much: a statement has a fixed cost, ~0.6
 * CPU-seconds more for 195 MB in statements of 16 MB than in statements of 32 MB (measured);
 * one statement over several parts reads them in parallel.
 */
const LOAD_BYTES = 32 * 1024 * 1024;

/**
 * One upload's load: started when its first part is on disk, finished (or failed) through
 * `result`. `abandon` interrupts it and leaves nothing behind.
 */
export class StagedLoad {
  readonly result: Promise<StagedTable>;
  private session: InterruptibleSession | undefined;
  private running = true;
  private abandoned = false;
  /** The staging table became the target: nothing is left to drop. */
  private consumed = false;
  private readonly staging: string;
  /** The typing options, once known (the JSON form names them anywhere in its body). */
  private knownTyping: TypingOptions | undefined;

  constructor(
    private readonly database: Database,
    private readonly target: StagedLoadTarget,
    private readonly feed: PartFeed,
    private readonly typing: Promise<TypingOptions>,
    onFailure: (error: Error) => void,
  ) {
    this.staging = `${STAGING_PREFIX}${target.jobId.toLowerCase()}`;
    typing.then(
      (known) => {
        this.knownTyping = known;
      },
      () => undefined,
    );
    this.result = database
      .dedicated((session) => this.run(session))
      .finally(() => {
        this.running = false;
      });
    this.result.catch((error: Error) => onFailure(error));
  }

  /** Stops the load (the client left, or the upload failed elsewhere). */
  abandon(): void {
    this.abandoned = true;
    if (this.running) this.session?.interrupt();
  }

  /** Says that the staging table was renamed over the target. */
  renamed(): void {
    this.consumed = true;
  }

  /** Drops the committed staging table, unless it became the target. */
  async drop(): Promise<void> {
    if (this.consumed) return;
    await this.database
      .write((session) => session.run(`DROP TABLE IF EXISTS ${this.qualified}`))
      .catch(() => undefined);
  }

  get qualified(): string {
    return qualifiedName(this.target.namespace, this.staging);
  }

  private get label(): string {
    return this.target.format === 'csv' ? 'CSV' : 'NDJSON';
  }

  private source(parts: readonly CsvPart[]): FieldSource {
    return {
      format: this.target.format,
      parts,
      fieldCount: this.target.columnNames.length,
      lineEnd: this.feed.lineEnd(),
      pointers: this.target.pointers ?? [],
    };
  }

  /** Between statements: an interrupt only reaches a statement that is running. */
  private checkAbandoned(): void {
    if (this.abandoned) throw new InterruptedError('the upload was abandoned');
  }

  private readonly started = performance.now();
  private readonly steps: string[] = [];

  /** Runs `work` as a step of the timeline (see StagedTable.steps). */
  private async step<T>(name: string, work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      const at = (ms: number) => Math.round(ms);
      this.steps.push(`${name}:${at(start - this.started)}+${at(performance.now() - start)}`);
    }
  }

  private async run(session: InterruptibleSession): Promise<StagedTable> {
    this.session = session;
    const { namespace } = this.target;
    // Schemas are made through the writer, one at a time: concurrent creations conflict.
    await this.database.write((writer) =>
      writer.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(namespace)}`),
    );
    const first = await this.feed.next(0);
    this.checkAbandoned();
    await session.run('BEGIN TRANSACTION');
    try {
      const inferred = await this.inferSample(session, first.slice(0, 1));
      let types = this.withPinned(inferred, this.knownTyping);
      await this.create(session, types);
      const loaded = await this.loadParts(session, first, types);
      this.checkAbandoned();
      const typing = await this.typing;
      types = await this.settleTypes(session, loaded, types, typing, inferred);
      const widened = await this.typingReport(session, loaded, types, typing, inferred);
      if (checkedColumns(types).length > 0)
        await session.run(`ALTER TABLE ${this.qualified} DROP COLUMN ${MISFITS}`);
      const [row] = await session.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${this.qualified}`);
      await this.step('commit', () => session.run('COMMIT'));
      return {
        steps: this.steps.join(' '),
        staging: this.staging,
        rowCount: Number(row?.n ?? 0),
        columns: this.target.columnNames.map((name, i) => ({
          name,
          type: shownType(types[i] as InferredType),
        })),
        widened,
      };
    } catch (error) {
      await session.run('ROLLBACK').catch(() => undefined);
      if (error instanceof OutOfMemoryError) throw outOfMemory(this.target.columnNames.length);
      // Interrupted by anything but the upload's own end: the server is stopping.
      if (error instanceof InterruptedError && !this.abandoned) {
        throw new ApiErrorClass(
          'unavailable',
          'the server is stopping: the upload was not stored; send it again',
        );
      }
      throw error;
    }
  }

  /** The types of the sample, the first part: what the load starts with. */
  private async inferSample(
    session: Session,
    sample: readonly CsvPart[],
  ): Promise<Map<number, ColumnInference>> {
    const all = Array.from({ length: this.target.columnNames.length }, (_, i) => i);
    return this.step('infer', () =>
      this.guard(session, sample, () => inferColumnTypes(session, this.source(sample), all)),
    );
  }

  private withPinned(
    inferred: Map<number, ColumnInference>,
    typing: TypingOptions | undefined,
  ): InferredType[] {
    return this.target.columnNames.map(
      (_, i) => typing?.pinned.get(i) ?? (inferred.get(i) as ColumnInference).type,
    );
  }

  /** Loads the parts as they arrive, in statements of at least LOAD_BYTES; returns them all. */
  private async loadParts(
    session: Session,
    first: LoadPart[],
    types: readonly InferredType[],
  ): Promise<CsvPart[]> {
    const loaded: CsvPart[] = [];
    const firstBytes = first.reduce((sum, part) => sum + part.bytes, 0);
    for (
      let parts = [...first, ...(await this.feed.next(LOAD_BYTES - firstBytes))];
      parts.length > 0;
      parts = await this.feed.next(LOAD_BYTES)
    ) {
      this.checkAbandoned();
      const megabytes = Math.round(parts.reduce((sum, part) => sum + part.bytes, 0) / 1e6);
      await this.step(`load ${megabytes} MB`, () => this.insertParts(session, parts, types));
      loaded.push(...parts);
    }
    return loaded;
  }

  private insertParts(
    session: Session,
    parts: readonly CsvPart[],
    types: readonly InferredType[],
  ): Promise<void> {
    return this.guard(session, parts, () =>
      session.run(`INSERT INTO ${this.qualified} ${loadSelect(this.source(parts), types)}`),
    );
  }

  /**
   * The final types: the client's where it gave them (a reload when they came after the load
   * began), and, for the columns with values that did not fit, the types of every row (the
   * second pass). Values that do not fit a type the client gave are a 400.
   */
  private async settleTypes(
    session: Session,
    loaded: readonly CsvPart[],
    loadedTypes: InferredType[],
    typing: TypingOptions,
    inferred: Map<number, ColumnInference>,
  ): Promise<InferredType[]> {
    let types = this.withPinned(inferred, typing);
    const loadedMisfits = await this.misfitColumns(session, loadedTypes);
    await this.refusePinnedMisfits(session, loaded, typing, loadedMisfits, loadedTypes);
    const misfits = loadedMisfits.filter((i) => !typing.pinned.has(i));
    if (misfits.length > 0) {
      // The second pass, for the columns that need it: their types over every row.
      const widened = await this.step(`widen ${misfits.length} columns`, () =>
        this.guard(session, loaded, () => inferColumnTypes(session, this.source(loaded), misfits)),
      );
      for (const [i, inference] of widened) inferred.set(i, inference);
      types = this.withPinned(inferred, typing);
    }
    if (types.some((type, i) => sqlType(type) !== sqlType(loadedTypes[i] as InferredType))) {
      await session.run(`DROP TABLE ${this.qualified}`);
      await this.create(session, types);
      await this.step('reload', () => this.insertParts(session, loaded, types));
      const still = await this.misfitColumns(session, types);
      await this.refusePinnedMisfits(session, loaded, typing, still, types);
      if (still.length > 0) throw new Error(`values of columns ${still.join(', ')} fit no inferred type`);
    }
    return types;
  }

  /** A 400 for the first value that does not fit a type the client gave, if the load found one. */
  private async refusePinnedMisfits(
    session: Session,
    loaded: readonly CsvPart[],
    typing: TypingOptions,
    misfits: readonly number[],
    loadedTypes: readonly InferredType[],
  ): Promise<void> {
    for (const i of misfits) {
      const pinned = typing.pinned.get(i);
      if (!pinned || sqlType(pinned) !== sqlType(loadedTypes[i] as InferredType)) continue;
      const name = this.target.columnNames[i] as string;
      const refusal = await pinnedMisfit(session, this.source(loaded), i, name, pinned, this.label);
      if (refusal) throw refusal;
    }
  }

  /** The widened columns; with `strict`, the first one refuses the upload. */
  private async typingReport(
    session: Session,
    loaded: readonly CsvPart[],
    types: readonly InferredType[],
    typing: TypingOptions,
    inferred: Map<number, ColumnInference>,
  ): Promise<Widening[]> {
    const candidates = types.flatMap((type, i) =>
      type.kind === 'VARCHAR' && !typing.pinned.has(i) && isWideningCandidate(inferred.get(i)?.counts)
        ? [i]
        : [],
    );
    const widened = await this.step(`report ${candidates.length} columns`, () =>
      findWidenings(
        session,
        this.source(loaded),
        candidates.map((i) => ({ index: i, name: this.target.columnNames[i] as string })),
      ),
    );
    widened.sort((a, b) => a.line - b.line);
    const first = widened[0];
    if (typing.strict && first) throw strictRefusal(first, this.label);
    return widened;
  }

  private async create(session: Session, types: readonly InferredType[]): Promise<void> {
    const columns = this.target.columnNames.map(
      (name, i) => `${quoteIdentifier(name)} ${sqlType(types[i] as InferredType)}`,
    );
    if (checkedColumns(types).length > 0) columns.push(`${MISFITS} VARCHAR`);
    await session.run(`CREATE TABLE ${this.qualified} (${columns.join(', ')})`);
  }

  private async misfitColumns(session: Session, types: readonly InferredType[]): Promise<number[]> {
    if (checkedColumns(types).length === 0) return [];
    const rows = await session.all<{ i: string }>(
      `SELECT DISTINCT unnest(string_split(${MISFITS}, ',')) AS i FROM ${this.qualified} WHERE ${MISFITS} IS NOT NULL`,
    );
    return rows.map((row) => Number(row.i)).sort((a, b) => a - b);
  }

  /**
   * Runs one read of `parts`; a CSV reader error becomes a 400 naming the first faulty line,
   * found by reading the parts again with a rejects table (the transaction is over then).
   */
  private async guard<T>(session: Session, parts: readonly CsvPart[], work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof CsvReadError)) throw error;
      await session.run('ROLLBACK').catch(() => undefined);
      throw await diagnoseCsv(session, this.source(parts), this.target.jobId, error);
    }
  }
}

/** The first faulty line of a CSV that DuckDB's reader refused, as a 400. */
export async function diagnoseCsv(
  session: Session,
  source: CsvSource,
  jobId: string,
  error: CsvReadError,
): Promise<ApiError> {
  const context = { label: 'CSV', fieldCount: source.fieldCount };
  const rejects = { table: `rejects_${jobId}`, scan: `rejects_scan_${jobId}` };
  try {
    // Every field is read: with count(*) alone DuckDB skips the values, and their checks.
    const fields = Array.from({ length: source.fieldCount }, (_, i) => csvField(i));
    await session.run(`SELECT count(list_value(${fields.join(', ')})) FROM ${readCsv(source, rejects)}`);
    const located = await firstRejectedLine(session, rejects, source.parts, context);
    if (located) return located;
  } catch {
    // The read fails even with a rejects table: DuckDB's own words are all there is.
  } finally {
    await dropRejects(session, rejects);
  }
  return badRequest(describeCsvProblem(error.problem, undefined, context));
}

export function outOfMemory(columns: number): ApiError {
  return new ApiErrorClass(
    'unavailable',
    `the server ran out of memory for this CSV (its DuckDB memory limit); try again later, or send fewer columns (${columns}) or rows per request`,
  );
}

/** Drops the staging tables of uploads a crash cut short. */
export async function dropAbandonedUploads(database: Database): Promise<void> {
  const tables = await database.read((session) =>
    session.all<{ schema_name: string; table_name: string }>(
      `SELECT schema_name, table_name FROM duckdb_tables() WHERE starts_with(table_name, '${STAGING_PREFIX}')`,
    ),
  );
  for (const table of tables) {
    await database.write((session) =>
      session.run(`DROP TABLE IF EXISTS ${qualifiedName(table.schema_name, table.table_name)}`),
    );
  }
}

import { ApiError, notFound } from '../errors.js';
import {
  type Execution,
  type ExecutionState,
  FAILURE_TYPES,
  hasResult,
  STATES,
  visibleState,
} from '../executions/execution.js';
import type { Executions } from '../executions/executions.js';
import { csvHeader } from '../executions/row-rendering.js';
import {
  envelopeWithoutResult,
  executionFields,
  type NextPage,
  resultsEnvelope,
  wholeResultMetadata,
} from './envelope.js';
import { LruCache } from './lru-cache.js';
import { nextUri } from './next-page.js';
import { type ResultRequest, requestKey } from './result-request.js';
import type { ResultFormat, ResultRows } from './result-rows.js';
import type { RowsFile } from './rows-file.js';
import { discardRows, RowsInParts } from './rows-in-parts.js';

/**
 * Answers for the results endpoints. Every answer for a completed execution is a pure
 * function of (execution, parameters), so the bytes of each one are kept and repeated
 * requests are served from memory; a new execution simply makes new keys. A large page is
 * not kept: its rows stay in the file DuckDB wrote, sent once and removed.
 */

export interface Answer {
  status: number;
  contentType: string;
  /** The answer's bytes; for a large page, those before its rows. */
  body: Buffer;
  headers: Record<string, string>;
  /** Rows × columns of the page (0 without rows), for the datapoints-served metric. */
  datapoints: number;
  /**
   * A large page's rows, in the files DuckDB wrote (or is writing), sent after `body`
   * (streamed-answer.ts) and then removed; the bytes after them depend on how many the rows
   * were. `headers` has the Content-Length when it is known before sending.
   */
  rows?: StreamedRows;
}

export interface StreamedRows {
  rows: RowsFile | RowsInParts;
  /** What goes between two parts' rows: `,` between JSON objects; nothing after a CSV line. */
  separator: Buffer;
  tail: (rowsBytes: number) => Buffer;
}

export interface ResultsOptions {
  maxDatapointsPerRequest: number;
  baseUrl: () => string;
  cacheBytes: number;
  /** A larger answer is not kept in the answer cache. */
  maxCachedAnswerBytes: number;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
const CSV_TYPE = 'text/csv; charset=utf-8';

const json = (status: number, value: unknown): Answer => ({
  status,
  contentType: JSON_TYPE,
  body: Buffer.from(JSON.stringify(value)),
  headers: {},
  datapoints: 0,
});

/** What the answer cache counts for an entry beyond its body. */
const ENTRY_BYTES = 768;

/**
 * The parts joined in memory of their own, for an answer the cache keeps. Buffer.concat and
 * Buffer.from put a result under 4 KB into a shared 8 KB pool slab, and a kept view keeps its
 * whole slab alive, while the cache counts the answer at its length + ENTRY_BYTES. Each answer
 * cut its head, rows, tail and their join from the pool, so few kept answers shared a slab.
 * Measured (2026-11-23, docs/library-notes.md): after `LOAD_REQUESTS=16000 npm run test:load`,
 * 3,102 kept answers held 2,229 slabs (17.4 MB; 11.5 MB of the live memory's 12 MB growth
 * over the phases, now 3 MB); 20,000 distinct one-row pages, counted 19.5 MB, added 63 MB of
 * live memory, now 29 MB.
 */
function ownedBytes(parts: readonly Buffer[]): Buffer {
  let length = 0;
  for (const part of parts) length += part.length;
  const bytes = Buffer.allocUnsafeSlow(length);
  let at = 0;
  for (const part of parts) at += part.copy(bytes, at);
  return bytes;
}

export class Results {
  private readonly answers: LruCache<Answer>;

  constructor(
    private readonly executions: Executions,
    private readonly rows: ResultRows,
    private readonly options: ResultsOptions,
  ) {
    this.answers = new LruCache(
      options.cacheBytes,
      // Besides its body, an entry costs about 700 bytes: the cache's entry, the answer and
      // its headers, the key (heap snapshots after the load test, 2026-11-23).
      (answer) => answer.body.length + ENTRY_BYTES,
      options.maxCachedAnswerBytes,
    );
  }

  /** Removes what was written ahead for requests that will not come now (at shutdown). */
  close(): Promise<void> {
    return this.rows.close();
  }

  /** What the answer cache and the row-set cache under it hold now and may hold at most. */
  get caches(): Record<'answers' | 'rows', { bytes: number; maxBytes: number }> {
    return {
      answers: { bytes: this.answers.bytes, maxBytes: this.answers.maxBytes },
      rows: this.rows.cache,
    };
  }

  /**
   * The latest result of an operator's query file that everyone reads (the metrics
   * endpoint): its latest execution with a result, else its latest in any state.
   */
  async latest(
    queryId: number,
    request: ResultRequest,
    format: ResultFormat,
    prefix: string,
  ): Promise<Answer> {
    const execution = this.executions.latestWithResult(queryId) ?? this.executions.latest(queryId);
    if (!execution) throw notFound(`saved query ${queryId} has not been executed yet`);
    return this.answer(execution, request, format, prefix);
  }

  /** GET /execution/{id}/status: the envelope without rows, plus queue place, error or metadata. */
  status(execution: Execution): Record<string, unknown> {
    const state = visibleState(execution);
    const body: Record<string, unknown> = executionFields(execution, state);
    const position = this.executions.queuePosition(execution.id);
    if (position !== undefined) body.queue_position = position;
    if (execution.error) body.error = execution.error;
    if (hasResult(execution) && state !== STATES.expired)
      body.result_metadata = wholeResultMetadata(execution);
    return body;
  }

  /** The answer for one execution's result (its envelope without rows when it has none). */
  async answer(
    execution: Execution,
    request: ResultRequest,
    format: ResultFormat,
    prefix: string,
  ): Promise<Answer> {
    const state = visibleState(execution);
    const servable =
      state === STATES.completed || (state === STATES.completedPartial && request.allowPartial);
    if (!servable) return this.withoutResult(execution, state, format);
    const sampled = request.sampleCount !== undefined;
    const key = `${execution.id}\u0000${format}\u0000${prefix}\u0000${requestKey(request)}`;
    if (!sampled) {
      const cached = this.answers.get(key);
      if (cached) return cached;
    }
    const page = await this.rows.page(execution, request, format, this.options.maxDatapointsPerRequest);
    try {
      let next: NextPage | undefined;
      const end = request.offset + page.count;
      if (!sampled && request.limit !== undefined && end < page.totalRowCount) {
        next = {
          offset: end,
          uri: nextUri(this.options.baseUrl(), prefix, execution.id, format, request.given, end),
        };
      }
      const { head, tail } =
        format === 'json'
          ? resultsEnvelope(execution, state, page, next)
          : { head: `${csvHeader(page.columns)}\n`, tail: () => '' };
      const answer: Answer = {
        status: 200,
        contentType: format === 'json' ? JSON_TYPE : CSV_TYPE,
        body: Buffer.from(head),
        headers:
          format === 'csv' && next
            ? { 'X-Dune-Next-Offset': String(next.offset), 'X-Dune-Next-Uri': next.uri }
            : {},
        datapoints: page.count * page.columns.length,
      };
      const rows = page.rows;
      if (Buffer.isBuffer(rows)) {
        answer.body = ownedBytes([answer.body, rows, Buffer.from(tail(rows.length))]);
        if (!sampled) this.answers.set(key, answer);
        return answer;
      }
      answer.rows = {
        rows,
        separator: Buffer.from(format === 'json' ? ',' : ''),
        tail: (bytes) => Buffer.from(tail(bytes)),
      };
      if (!(rows instanceof RowsInParts)) {
        const after = Buffer.byteLength(tail(rows.bytes));
        answer.headers['Content-Length'] = String(answer.body.length + rows.bytes + after);
      }
      return answer;
    } catch (error) {
      if (!Buffer.isBuffer(page.rows)) await discardRows(page.rows);
      throw error;
    }
  }

  /**
   * For a whole-file format (Parquet): the execution if its result may be served with these
   * parameters, else the CSV answer's 409 saying why not.
   */
  servable(execution: Execution, request: ResultRequest): Execution {
    const state = visibleState(execution);
    if (state === STATES.completed || (state === STATES.completedPartial && request.allowPartial))
      return execution;
    throw this.noResult(execution, state);
  }

  /** Why a file format (CSV, Parquet) has nothing to send: a 409. */
  private noResult(execution: Execution, state: ExecutionState): ApiError {
    return new ApiError(
      'conflict',
      state === STATES.completedPartial
        ? `execution ${execution.id} holds a partial result (over the row limit); add allow_partial_results=true to get it`
        : `execution ${execution.id} is in state ${state}: it has no result to return`,
    );
  }

  private withoutResult(execution: Execution, state: ExecutionState, format: ResultFormat): Answer {
    const partial = state === STATES.completedPartial;
    if (format === 'csv') throw this.noResult(execution, state);
    if (partial) {
      return json(
        200,
        envelopeWithoutResult(execution, STATES.failed, {
          type: FAILURE_TYPES.resultTooLarge,
          message: `the result has more than ${execution.rowCount} rows and is kept truncated to them; add allow_partial_results=true to get the partial result`,
        }),
      );
    }
    return json(200, envelopeWithoutResult(execution, state));
  }
}

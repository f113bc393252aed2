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
import {
  envelopeWithoutResult,
  executionFields,
  type NextPage,
  type PageShape,
  wholeResultMetadata,
} from './envelope.js';
import { LruCache } from './lru-cache.js';
import { nextUri } from './next-page.js';
import { BytesBody, type PageBody } from './page-body.js';
import { JSON_TYPE, PAGE_FORMATS, type PageFormat, type ResultFormat } from './result-format.js';
import { type ResultRequest, requestKey } from './result-request.js';
import type { ResultRows } from './result-rows.js';

/**
 * Answers for the results endpoints. Every answer for a completed execution is a pure
 * function of (execution, parameters), so the bytes of each one are kept and repeated
 * requests are served from memory; a new execution simply makes new keys. A large page is
 * not kept: its rows stay in the file DuckDB wrote, sent once and removed.
 */

export interface Answer {
  status: number;
  contentType: string;
  headers: Record<string, string>;
  /**
   * The answer's bytes: in memory, or for a large page the rows in the files DuckDB wrote (or
   * is writing) with the bytes before and after them, sent once and then removed.
   */
  body: PageBody;
  /** Rows × columns of the page (0 without rows), for the datapoints-served metric. */
  datapoints: number;
}

export interface ResultsOptions {
  maxDatapointsPerRequest: number;
  baseUrl: () => string;
  cacheBytes: number;
  /** A larger answer is not kept in the answer cache. */
  maxCachedAnswerBytes: number;
}

export { JSON_TYPE };

const json = (status: number, value: unknown): Answer => ({
  status,
  contentType: JSON_TYPE,
  body: new BytesBody(Buffer.from(JSON.stringify(value))),
  headers: {},
  datapoints: 0,
});

/**
 * What the answer cache counts for an entry beyond its body: the cache's entry, the answer
 * and its headers, the key, about 700 bytes (heap snapshots after the load test, 2026-11-23).
 */
const ENTRY_BYTES = 768;

export class Results {
  private readonly answers: LruCache<Answer>;

  constructor(
    private readonly executions: Executions,
    private readonly rows: ResultRows,
    private readonly options: ResultsOptions,
  ) {
    this.answers = new LruCache(
      options.cacheBytes,
      (answer) => (answer.body.size ?? 0) + ENTRY_BYTES,
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
    formatName: ResultFormat,
    prefix: string,
  ): Promise<Answer> {
    const format = PAGE_FORMATS[formatName];
    const state = visibleState(execution);
    const servable =
      state === STATES.completed || (state === STATES.completedPartial && request.allowPartial);
    if (!servable) return this.withoutResult(execution, state, format);
    // A sample is drawn anew each time: never kept.
    const kept = request.sampleCount === undefined;
    const key = `${execution.id}\u0000${format.name}\u0000${prefix}\u0000${requestKey(request)}`;
    const cached = kept ? this.answers.get(key) : undefined;
    if (cached) return cached;
    const page = await this.rows.page(execution, request, format.name, this.options.maxDatapointsPerRequest);
    try {
      const next = kept ? this.nextPage(execution, request, format, prefix, page) : undefined;
      const { head, tail, headers } = format.frame(execution, state, page, next);
      const answer: Answer = {
        status: 200,
        contentType: format.contentType,
        headers,
        body: page.rows.framed(head, tail),
        datapoints: page.count * page.columns.length,
      };
      if (kept && answer.body.reusable) this.answers.set(key, answer);
      return answer;
    } catch (error) {
      await page.rows.discard();
      throw error;
    }
  }

  /** The page after this one, when rows remain after it and the client pages (`limit`). */
  private nextPage(
    execution: Execution,
    request: ResultRequest,
    format: PageFormat,
    prefix: string,
    page: PageShape,
  ): NextPage | undefined {
    const end = request.offset + page.count;
    if (request.limit === undefined || end >= page.totalRowCount) return undefined;
    return {
      offset: end,
      uri: nextUri(this.options.baseUrl(), prefix, execution.id, format, request.given, end),
    };
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

  private withoutResult(execution: Execution, state: ExecutionState, format: PageFormat): Answer {
    if (!format.envelopeWithoutRows) throw this.noResult(execution, state);
    if (state === STATES.completedPartial) {
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

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type Execution, STATES } from '../executions/execution.js';

/**
 * The service's Prometheus metrics, served at /metrics. Each service owns its registry
 * (never prom-client's global one), so several services in one process (the tests) keep
 * separate counts. Every label takes a bounded set of values: route patterns, never URLs;
 * saved-query ids, never execution ids; nothing that names an account, a key or a table.
 */

/** The table operations whose request bodies are counted as uploaded bytes. */
export type UploadOperation = 'upload' | 'insert' | 'upsert';

const REQUEST_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const UPLOAD_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const UPLOAD_BYTES = [1e3, 1e4, 1e5, 1e6, 1e7, 5e7, 1e8, 2e8];
const REFRESH_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

export interface ServiceMetricsOptions {
  /** prom-client's process and Node.js metrics (memory, CPU, event loop, GC). */
  processMetrics?: boolean;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route' | 'status'>;
  private readonly uploadBytes: Histogram<'operation'>;
  private readonly uploadSeconds: Histogram<'operation' | 'status'>;
  private readonly refreshSeconds: Histogram<'query_id' | 'state'>;
  private readonly refreshFailures: Counter<'query_id' | 'type'>;
  private readonly datapoints: Counter<'format'>;
  private readonly fastLaneRequests: Counter;
  private readonly requestSeries = new Map<
    string,
    { count: Counter.Internal; seconds: Histogram.Internal<'method' | 'route' | 'status'> }
  >();

  constructor(options: ServiceMetricsOptions = {}) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: REQUEST_SECONDS,
      registers,
    });
    this.uploadBytes = new Histogram({
      name: 'upload_body_bytes',
      help: 'Request body bytes of stored uploads (CSV upload) and inserts',
      labelNames: ['operation'],
      buckets: UPLOAD_BYTES,
      registers,
    });
    this.uploadSeconds = new Histogram({
      name: 'upload_duration_seconds',
      help: 'Time to receive and store an upload or insert, by operation and status',
      labelNames: ['operation', 'status'],
      buckets: UPLOAD_SECONDS,
      registers,
    });
    this.refreshSeconds = new Histogram({
      name: 'refresh_duration_seconds',
      help: 'Time a saved-query execution (scheduled refresh or execute) ran, by query and final state',
      labelNames: ['query_id', 'state'],
      buckets: REFRESH_SECONDS,
      registers,
    });
    this.refreshFailures = new Counter({
      name: 'refresh_failures_total',
      help: 'Saved-query executions that failed, by query and failure type',
      labelNames: ['query_id', 'type'],
      registers,
    });
    this.datapoints = new Counter({
      name: 'datapoints_served_total',
      help: 'Datapoints (rows x columns) returned by the results endpoints, by format',
      labelNames: ['format'],
      registers,
    });
    this.fastLaneRequests = new Counter({
      name: 'http_fast_lane_requests_total',
      help: 'Results requests the fast lane answered in front of express (also counted in http_requests_total)',
      registers,
    });
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  request(method: string, route: string, status: string, seconds: number): void {
    // The label sets are bounded (see above); keeping their series saves hashing them per request.
    const key = `${method} ${route} ${status}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      series = {
        count: this.requests.labels(method, route, status),
        seconds: this.requestSeconds.labels(method, route, status),
      };
      this.requestSeries.set(key, series);
    }
    series.count.inc();
    series.seconds.observe(seconds);
  }

  /** A request the fast lane took (src/http/fast-lane.ts). */
  fastLaneRequest(): void {
    this.fastLaneRequests.inc();
  }

  /** A finished upload or insert request; `bytes` only when it was stored. */
  upload(operation: UploadOperation, status: string, seconds: number, bytes?: number): void {
    this.uploadSeconds.observe({ operation, status }, seconds);
    if (bytes !== undefined) this.uploadBytes.observe({ operation }, bytes);
  }

  /**
   * Called with every execution that finished (Executions.onFinished), with the label that
   * names its query (bounded: the operator's query ids, and one for all users' queries).
   */
  executionFinished(execution: Execution, queryId: string): void {
    if (execution.startedAt && execution.endedAt) {
      const seconds = (execution.endedAt.getTime() - execution.startedAt.getTime()) / 1000;
      this.refreshSeconds.observe({ query_id: queryId, state: execution.state }, Math.max(0, seconds));
    }
    if (execution.state === STATES.failed) {
      this.refreshFailures.inc({ query_id: queryId, type: execution.error?.type ?? 'unknown' });
    }
  }

  /**
   * Reports the result caches' fill at each scrape: the bytes they hold and their bounds
   * (what an operator sizing memory needs; the load test waits for them to be full).
   */
  watchCaches(read: () => Record<string, { bytes: number; maxBytes: number }>): void {
    const registers = [this.registry];
    new Gauge({
      name: 'result_cache_bytes',
      help: 'Bytes held by a result cache (rows: row sets, answers: serialized pages), by its own estimate',
      labelNames: ['cache'],
      registers,
      collect() {
        for (const [cache, { bytes }] of Object.entries(read())) this.set({ cache }, bytes);
      },
    });
    new Gauge({
      name: 'result_cache_limit_bytes',
      help: 'The most a result cache holds before it evicts its least recently used entries',
      labelNames: ['cache'],
      registers,
      collect() {
        for (const [cache, { maxBytes }] of Object.entries(read())) this.set({ cache }, maxBytes);
      },
    });
  }

  /** Reports DuckDB's own memory at each scrape (what DUCKDB_MEMORY_LIMIT bounds). */
  watchDatabaseMemory(read: () => Promise<number>): void {
    new Gauge({
      name: 'duckdb_memory_bytes',
      help: "Bytes held by DuckDB's buffer manager: table data, buffers of running queries",
      registers: [this.registry],
      async collect() {
        // Unreadable while the database closes: the gauge keeps its last value.
        const bytes = await read().catch(() => undefined);
        if (bytes !== undefined) this.set(bytes);
      },
    });
  }

  datapointsServed(format: string, count: number): void {
    if (count > 0) this.datapoints.inc({ format }, count);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Account } from '../auth/account.js';
import type { Identity } from '../auth/key-store.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { sendError } from './error-handler.js';
import type { LaneRoute, RouteRequest } from './lane-routes.js';
import { headerKey } from './presented-key.js';
import { mayHoldKey } from './query-params.js';
import type { RequestPipeline } from './request-pipeline.js';
import type { Exchange, Next, Outcome, RequestStep } from './request-step.js';

/**
 * The second door: GETs of the lane-eligible routes (lane-routes.ts: the results, the metrics
 * endpoint among them) answered in front of express. The metrics endpoint is the service's
 * hot path (DESIGN §5), a page of a public result almost always ready in the answer cache;
 * through express it cost about 1.5 times the CPU of a minimal Express app answering the same
 * bytes (issue 17: router layers, promises, the garbage they leave); here it is a few calls.
 *
 * It runs the pipeline's steps (request-pipeline.ts) and the route's own code, so it answers,
 * counts and logs exactly what express would. It takes only a request whose handling cannot
 * depend on what express adds: a GET without a body, on a route's path spelled exactly (under
 * /v1 or /api/v1, no `%`-escapes, no trailing slash), whose key comes in a header and whose
 * query string holds none. Anything else (another spelling of the path, HEAD, `api_key` in the
 * query, no key at all) goes to express untouched, before anything was counted.
 */

/** A lane route found for a path. */
interface Found {
  route: LaneRoute;
  /** `/v1` or `/api/v1`, as spelled in the request. */
  prefix: string;
  /** The route's label in /metrics, as express gives it (whichever prefix it came in on). */
  label: string;
  params: Record<string, string>;
}

const PREFIXES = ['/v1', '/api/v1'];
/** What a path may hold to be taken: anything else (`%`, `#`, spaces) is express's to parse. */
const PLAIN_PATH = /^[\w\-.~!$&'()*+,;=:@/]*$/;

/** Finds the route a path names, as express's router would (case-sensitive, non-empty parameters). */
function routeFinder(routes: readonly LaneRoute[]): (path: string) => Found | undefined {
  const exact = new Map<string, Found>();
  const patterned: { route: LaneRoute; segments: string[] }[] = [];
  for (const route of routes) {
    if (!route.path.includes(':')) {
      for (const prefix of PREFIXES)
        exact.set(`${prefix}${route.path}`, { route, prefix, label: `/v1${route.path}`, params: {} });
    } else patterned.push({ route, segments: route.path.split('/').slice(1) });
  }
  const byPattern = (path: string, prefix: string): Found | undefined => {
    const parts = path.slice(prefix.length + 1).split('/');
    for (const { route, segments } of patterned) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const matches = segments.every((segment, i) => {
        const part = parts[i] as string;
        if (!segment.startsWith(':')) return segment === part;
        params[segment.slice(1)] = part;
        return part !== '';
      });
      if (matches) return { route, prefix, label: `/v1${route.path}`, params };
    }
    return undefined;
  };
  return (path) => {
    const found = exact.get(path);
    if (found || !PLAIN_PATH.test(path)) return found;
    const prefix = PREFIXES.find((p) => path.startsWith(`${p}/`));
    return prefix === undefined ? undefined : byPattern(path, prefix);
  };
}

/** What every request of the lane shares. */
interface Lane {
  /** The pipeline's steps, then the route found, then authenticate. */
  steps: readonly RequestStep[];
  fail(exchange: LaneExchange, error: unknown): void;
}

/**
 * A request the lane took: as the steps see it, as its route reads it, and its way through
 * the steps: one object and one closure per request.
 *
 * Once its answer is written it lets go of the request and the response. Holding them to the
 * end, under load V8 began to allocate Node's request objects in the old generation
 * (allocation-site pretenuring: `--trace-pretenuring-statistics` showed 12–30 decisions to
 * tenure in 6 s of autocannon, against 0–3 for express's door and for the lane before issue
 * 25, and 0–4 with this), which cost about 3 µs of CPU per request, all of it garbage
 * collection (the same code with `--no-allocation-site-pretenuring` cost what the old lane
 * did). Exchanges were thus reachable past their requests; what kept them was not found.
 */
class LaneExchange implements Exchange, RouteRequest {
  identity: Identity | undefined = undefined;
  /** Whether it reached its route (past the limits), as express labels it in /metrics. */
  routed = false;
  readonly originalUrl: string;
  readonly baseUrl: string;
  readonly params: Record<string, string>;
  /** Handed to each step; also takes the route's error. */
  readonly next: Next;
  private step = 0;
  /** The answer is written and the request let go of: nothing more to do. */
  private over = false;

  constructor(
    private readonly lane: Lane,
    public req: IncomingMessage,
    public res: ServerResponse,
    readonly key: string,
    readonly path: string,
    private readonly found: Found,
  ) {
    this.originalUrl = req.url as string;
    this.baseUrl = found.prefix;
    this.params = found.params;
    // Assigned, not declared: tsx (esbuild's keepNames) names a function declared in a
    // function body each time it is made, 0.56 µs against 0.01 (docs/library-notes.md).
    this.next = (error) => this.advance(error);
  }

  get account(): Account {
    return (this.identity as Identity).account;
  }

  outcome(): Outcome {
    const handle = this.identity?.account.handle;
    return { route: this.routed ? this.found.label : 'unmatched', path: this.path, handle };
  }

  /** The next step, or past the last the route's answer; an error is answered at once. */
  private advance(error: unknown): void {
    if (this.over) return;
    const steps = this.lane.steps;
    if (error || this.step > steps.length) {
      this.lane.fail(this, error ?? new Error('a step went on twice, or the route failed without an error'));
      return;
    }
    const step = steps[this.step++];
    try {
      if (step) step.run(this, this.next)?.catch(this.next);
      else this.found.route.answer(this, this.res).then(() => this.letGo(), this.next);
    } catch (thrown) {
      this.next(thrown);
    }
  }

  /** Lets go of the request once its answer is written (a large page may still be sending). */
  private letGo(): void {
    if (!this.res.writableEnded) return;
    this.over = true;
    const gone = this as { req: IncomingMessage | undefined; res: ServerResponse | undefined };
    gone.req = undefined;
    gone.res = undefined;
  }
}

/** The step the lane takes where express's router finds the route. */
const ROUTED: RequestStep = {
  name: 'route found',
  run(exchange, next) {
    (exchange as LaneExchange).routed = true;
    next();
  },
};

export interface FastLaneDeps {
  pipeline: RequestPipeline;
  routes: readonly LaneRoute[];
  metrics: ServiceMetrics;
  logger: Logger;
}

export function fastLane(deps: FastLaneDeps, express: RequestListener): RequestListener {
  const { pipeline, metrics, logger } = deps;
  const find = routeFinder(deps.routes);
  const lane: Lane = {
    steps: [...pipeline.steps, ROUTED, pipeline.authenticate],
    fail: (exchange, error) => sendError(exchange.req, exchange.res, error, logger, exchange.path),
  };

  /** The request, if the lane answers it; undefined leaves it to express. Counts nothing. */
  const take = (req: IncomingMessage, res: ServerResponse): LaneExchange | undefined => {
    if (req.method !== 'GET') return undefined;
    const url = req.url ?? '';
    const question = url.indexOf('?');
    const path = question < 0 ? url : url.slice(0, question);
    const found = find(path);
    if (found === undefined) return undefined;
    if (question >= 0 && mayHoldKey(url.slice(question))) return undefined;
    const headers = req.headers;
    const length = headers['content-length'];
    if ((length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined)
      return undefined;
    const key = headerKey(headers);
    return key === undefined ? undefined : new LaneExchange(lane, req, res, key, path, found);
  };

  return (req, res) => {
    const exchange = take(req, res);
    if (!exchange) {
      express(req, res);
      return;
    }
    metrics.fastLaneRequest();
    exchange.next();
  };
}

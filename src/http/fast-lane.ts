import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Identity, KeyStore } from '../auth/key-store.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { type Answer, JSON_TYPE } from '../results/results.js';
import type { AuthFailureLimit } from './auth-failure-limit.js';
import { headerKey } from './authenticate.js';
import { errorAnswer } from './error-handler.js';
import { mayHoldKey } from './query-params.js';
import type { RateLimits } from './rate-limit.js';
import type { Observe } from './request-observer.js';
import { send } from './routes/results.js';

/**
 * The metrics endpoint, `GET /v1/restaking/avs-stats` (and under /api/v1), answered in front
 * of express: the service's hot path (DESIGN §5), a page of a public result that is almost
 * always ready in the answer cache. Through express it cost about 1.5 times the CPU of a
 * minimal Express app answering the same bytes (issue 17: router layers, promises, the
 * garbage they leave); here it is one function.
 *
 * It answers exactly what express would: the route's own answer (`metricsAnswerer`), the same
 * rate limits, request log line, /metrics series and error bodies, from the same objects.
 * It takes only a request it can answer in every case without express: a GET on the exact
 * path, without a body, whose key comes in a header, identifies an account and is not refused
 * by the failed-authentication limit. Anything else (another spelling of the path, HEAD,
 * `api_key` in the query, a missing or unknown key, a blocked address) goes to express
 * untouched, before anything was counted, so it is answered there as if this did not exist.
 */

/** The label express gives the route in /metrics, whichever prefix the request came in on. */
const ROUTE = '/v1/restaking/avs-stats';
const PREFIXES = new Map([
  ['/v1/restaking/avs-stats', '/v1'],
  ['/api/v1/restaking/avs-stats', '/api/v1'],
]);

export interface FastLaneDeps {
  keys: KeyStore;
  authFailures: AuthFailureLimit;
  rateLimits: RateLimits;
  observe: Observe;
  metrics: ServiceMetrics;
  logger: Logger;
  /** The metrics endpoint's answer, as the express route gives it. */
  metricsAnswer: (req: { originalUrl: string }, prefix: string) => Promise<Answer>;
}

/** What the lane needs to know of a request it takes. */
interface Taken {
  path: string;
  prefix: string;
  identity: Identity;
}

export function fastLane(deps: FastLaneDeps, express: RequestListener): RequestListener {
  const { keys, authFailures, rateLimits, observe, metrics, logger, metricsAnswer } = deps;

  /**
   * The request, if the lane answers it; undefined leaves it to express. Counts nothing
   * express would count again (the failed-authentication limit's look-up is shared).
   */
  const take = (req: IncomingMessage): Taken | undefined => {
    if (req.method !== 'GET') return undefined;
    const url = req.url ?? '';
    const question = url.indexOf('?');
    const path = question < 0 ? url : url.slice(0, question);
    const prefix = PREFIXES.get(path);
    if (prefix === undefined) return undefined;
    if (question >= 0 && mayHoldKey(url.slice(question))) return undefined;
    const headers = req.headers;
    const length = headers['content-length'];
    if ((length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined)
      return undefined;
    const key = headerKey(headers);
    if (key === undefined) return undefined;
    const identity = keys.identify(key);
    if (!identity || !authFailures.passes(req.socket.remoteAddress ?? 'unknown', identity)) return undefined;
    return { path, prefix, identity };
  };

  const fail = (res: ServerResponse, error: unknown, path: string) => {
    const { status, headers, body } = errorAnswer(error, logger, 'GET', path);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const payload = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { ...headers, 'Content-Type': JSON_TYPE, 'Content-Length': payload.length });
    res.end(payload);
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, taken: Taken): Promise<void> => {
    metrics.fastLaneRequest();
    // Past the rate limit the request has reached the route, as in express (its /metrics label).
    let routed = false;
    observe(req, res, () => ({
      route: routed ? ROUTE : 'unmatched',
      path: taken.path,
      handle: taken.identity.account.handle,
    }));
    try {
      const limited = rateLimits.count(taken.identity, 'GET');
      if (limited) for (const [name, value] of Object.entries(await limited)) res.setHeader(name, value);
      routed = true;
      send(res, await metricsAnswer({ originalUrl: req.url as string }, taken.prefix), metrics, 'json');
    } catch (error) {
      fail(res, error, taken.path);
    }
  };

  return (req, res) => {
    const taken = take(req);
    if (taken) void answer(req, res, taken);
    else express(req, res);
  };
}

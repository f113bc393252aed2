import type { ServerResponse } from 'node:http';
import type { Request, Response, Router } from 'express';
import { badRequest, notFound } from '../../errors.js';
import type { ServiceMetrics } from '../../metrics/service-metrics.js';
import { LruCache } from '../../results/lru-cache.js';
import { PAGE_FORMATS, type ResultFormat } from '../../results/result-format.js';
import { parseResultRequest, RESULT_PARAMETERS, type ResultRequest } from '../../results/result-request.js';
import type { Answer } from '../../results/results.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import type { LaneRoutes } from '../lane-routes.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { mayHoldKey, readQueryParams } from '../query-params.js';
import { sendAnswer } from '../send-answer.js';

/** The saved query behind the spec's metrics endpoint (the id the mirrored API uses). */
export const AVS_METRICS_QUERY_ID = 3693850;

/** A query id from a path or queryID: decimal digits (`03693850` is 3693850). */
export function parseQueryId(text: string | undefined, what: string): number {
  if (text === undefined || !/^\d{1,15}$/.test(text))
    throw notFound(`no saved query with id ${JSON.stringify(String(text).slice(0, 40))}`);
  const id = Number(text);
  if (!Number.isSafeInteger(id)) throw badRequest(`${what} is out of range`);
  return id;
}

/** What parameter checks read of a request: its URL (the fast lane has no express request). */
type RequestUrl = Pick<Request, 'originalUrl'>;

/** Query parameter values come as `params.NAME=VALUE` (how both official clients send them). */
const PARAMETER_PREFIX = 'params.';

function resultParams(req: RequestUrl, extra: readonly string[] = []): Map<string, string> {
  return readQueryParams(req, [...RESULT_PARAMETERS, ...extra], undefined, PARAMETER_PREFIX);
}

/** The result parameters, and the query parameter values by name. */
interface CheckedResultRequest {
  request: ResultRequest;
  values: Map<string, string>;
}

function checkResultRequest(req: RequestUrl): CheckedResultRequest {
  const params = resultParams(req);
  const values = new Map<string, string>();
  for (const [name, value] of params)
    if (name.startsWith(PARAMETER_PREFIX)) values.set(name.slice(PARAMETER_PREFIX.length), value);
  return { request: parseResultRequest(params), values };
}

/**
 * The checked parameters of recent query strings: dashboards repeat the same few requests,
 * and checking them again is a good part of the work of answering one from the cache.
 * Query strings with a key in them are never kept.
 */
function checkedOnce<T>(check: (req: RequestUrl) => T): (req: RequestUrl) => T {
  // Bounded by bytes: query strings can be long; an entry costs about its key twice over.
  const recent = new LruCache<{ checked: T; bytes: number }>(1 << 20, (entry) => entry.bytes);
  return (req) => {
    const url = req.originalUrl;
    const question = url.indexOf('?');
    const query = question < 0 ? '' : url.slice(question + 1);
    if (mayHoldKey(query)) return check(req);
    const kept = recent.get(query);
    if (kept) return kept.checked;
    const checked = check(req);
    recent.set(query, { checked, bytes: 2 * query.length + 512 });
    return checked;
  };
}

/** Writes a prepared answer (a large page: streamed from DuckDB's files, send-answer.ts) and counts its datapoints. */
export function send(
  res: ServerResponse,
  answer: Answer,
  metrics: ServiceMetrics,
  format: ResultFormat,
): void {
  void sendAnswer(res, answer);
  metrics.datapointsServed(format, answer.datapoints);
}

/** The spec's metrics endpoint names its query in `queryID`, which must be the metrics query. */
function checkMetricsRequest(req: RequestUrl): ResultRequest {
  const params = readQueryParams(req, [...RESULT_PARAMETERS, 'queryID']);
  const given = params.get('queryID');
  if (given === undefined)
    throw badRequest(`query parameter "queryID" is required (${AVS_METRICS_QUERY_ID})`);
  if (!/^\d{1,15}$/.test(given.trim()) || Number(given.trim()) !== AVS_METRICS_QUERY_ID) {
    throw badRequest(
      `query parameter "queryID" must be ${AVS_METRICS_QUERY_ID}, the AVS metrics query; got ${JSON.stringify(given)}`,
    );
  }
  params.delete('queryID');
  return parseResultRequest(params);
}

/**
 * The results routes: their GETs are lane-eligible (the fast lane answers them in front of
 * express, ../fast-lane.ts), so they read a request only as a RouteRequest.
 */
export function resultRoutes(router: Router, deps: AppDeps, lane: LaneRoutes): void {
  const auth = authenticate(deps.keys);
  const { queries, results, metrics } = deps;
  const metricsRequest = checkedOnce(checkMetricsRequest);
  const resultRequest = checkedOnce(checkResultRequest);

  lane
    .get(router, '/restaking/avs-stats', async (req, res) => {
      const answer = await results.latest(AVS_METRICS_QUERY_ID, metricsRequest(req), 'json', req.baseUrl);
      send(res, answer, metrics, 'json');
    })
    .all(methodNotAllowed('GET'));

  for (const format of ['json', 'csv'] as ResultFormat[]) {
    const suffix = PAGE_FORMATS[format].pathSuffix;
    lane
      .get(router, `/query/:queryId/results${suffix}`, async (req, res) => {
        const id = parseQueryId(req.params.queryId, 'query id');
        const { request, values } = resultRequest(req);
        const execution = await queries.latestExecution(req.account, id, values);
        const asked = { ...request, reader: req.account.handle };
        send(res, await results.answer(execution, asked, format, req.baseUrl), metrics, format);
      })
      .all(methodNotAllowed('GET'));
    const executionResults = lane.get(
      router,
      `/execution/:executionId/results${suffix}`,
      async (req, res) => {
        // `params.NAME` is accepted here and changes nothing: the TypeScript client's runQuery
        // sends the parameter values along, but an execution has only the ones it ran with.
        const { request } = resultRequest(req);
        const execution = await queries.readableExecution(req.account, String(req.params.executionId));
        const asked = { ...request, reader: req.account.handle };
        send(res, await results.answer(execution, asked, format, req.baseUrl), metrics, format);
      },
    );
    if (format === 'csv') {
      executionResults.all(methodNotAllowed('GET'));
      continue;
    }
    // The result dropped before its expiry (DESIGN §12): its rows go, the execution reads EXPIRED.
    executionResults
      .delete(auth, async (req: Request, res: Response) => {
        readQueryParams(req, []);
        res.json({ success: await queries.deleteResult(accountOf(res), String(req.params.executionId)) });
      })
      .all(methodNotAllowed('GET', 'DELETE'));
  }
}

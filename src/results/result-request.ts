import { badRequest } from '../errors.js';

/**
 * The parameters of a results request, checked once (DESIGN.md §5). `given` keeps them
 * as sent, for `next_uri`.
 */

export const RESULT_PARAMETERS = [
  'columns',
  'filters',
  'sort_by',
  'limit',
  'offset',
  'sample_count',
  'allow_partial_results',
  'ignore_max_datapoints_per_request',
] as const;

export interface ResultRequest {
  columns?: string;
  filters?: string;
  sortBy?: string;
  limit?: number;
  offset: number;
  sampleCount?: number;
  allowPartial: boolean;
  ignoreMaxDatapoints: boolean;
  /** The result parameters as given, for next_uri. */
  given: ReadonlyMap<string, string>;
  /** The handle of the key asking: results work is shared fairly between keys (DESIGN §12). */
  reader?: string;
}

function integer(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\s*\+?\d{1,15}\s*$/.test(value)) {
    throw badRequest(
      `query parameter "${name}" must be a whole number${min > 0 ? ` of at least ${min}` : ' (0 or more)'}, got ${JSON.stringify(value)}`,
    );
  }
  const number = Number(value.trim());
  if (number < min) throw badRequest(`query parameter "${name}" must be at least ${min}, got ${number}`);
  return number;
}

function flag(name: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  const lowered = value.trim().toLowerCase();
  if (lowered === 'true') return true;
  if (lowered === 'false') return false;
  throw badRequest(`query parameter "${name}" must be true or false, got ${JSON.stringify(value)}`);
}

export function parseResultRequest(params: ReadonlyMap<string, string>): ResultRequest {
  const given = new Map<string, string>();
  for (const name of RESULT_PARAMETERS) {
    const value = params.get(name);
    if (value !== undefined) given.set(name, value);
  }
  const limit = integer('limit', params.get('limit'), 1);
  const offset = integer('offset', params.get('offset'), 0);
  const sampleCount = integer('sample_count', params.get('sample_count'), 1);
  if (sampleCount !== undefined) {
    const clashing = ['limit', 'offset', 'filters'].filter((name) => params.has(name));
    if (clashing.length > 0) {
      throw badRequest(
        `query parameter "sample_count" cannot be combined with ${clashing.map((n) => `"${n}"`).join(', ')}`,
      );
    }
  }
  const text = (name: string) => {
    const value = params.get(name);
    return value === undefined || value.trim() === '' ? undefined : value;
  };
  return {
    ...(text('columns') !== undefined ? { columns: text('columns') } : {}),
    ...(text('filters') !== undefined ? { filters: text('filters') } : {}),
    ...(text('sort_by') !== undefined ? { sortBy: text('sort_by') } : {}),
    ...(limit !== undefined ? { limit } : {}),
    offset: offset ?? 0,
    ...(sampleCount !== undefined ? { sampleCount } : {}),
    allowPartial: flag('allow_partial_results', params.get('allow_partial_results')),
    ignoreMaxDatapoints: flag(
      'ignore_max_datapoints_per_request',
      params.get('ignore_max_datapoints_per_request'),
    ),
    given,
  };
}

/** A stable key for caching: the parameters that shape the page, in a fixed order. */
export function requestKey(request: ResultRequest): string {
  return RESULT_PARAMETERS.map((name) => request.given.get(name) ?? '\u0001').join('\u0000');
}

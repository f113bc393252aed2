import type { Request } from 'express';
import { badRequest } from '../errors.js';

/**
 * Whether a query string may carry an API key (`api_key`, its `_` percent-encoded too, in
 * any case): such a query string is never kept in a cache.
 */
export function mayHoldKey(query: string): boolean {
  return /api(_|%5f)key/i.test(query);
}

/**
 * Query parameters, checked once at the edge: an unknown or repeated parameter is a 400
 * naming it, so that a typo never silently changes a result. `api_key` is authentication,
 * not a parameter of any operation.
 */
export function readQueryParams(
  req: Pick<Request, 'originalUrl'>,
  allowed: readonly string[],
  /** A more helpful message for some unknown names. */
  explainUnknown?: (name: string) => string | undefined,
  /** Names that start with this are taken too (`params.` for query parameter values). */
  allowedPrefix?: string,
): Map<string, string> {
  const params = new Map<string, string>();
  const url = req.originalUrl;
  const question = url.indexOf('?');
  if (question < 0) return params;
  let search: URLSearchParams;
  try {
    search = new URLSearchParams(url.slice(question + 1));
  } catch {
    throw badRequest('the query string is malformed');
  }
  for (const [name, value] of search) {
    if (name === 'api_key') continue;
    if (!allowed.includes(name) && !(allowedPrefix !== undefined && name.startsWith(allowedPrefix))) {
      const explained = explainUnknown?.(name);
      if (explained) throw badRequest(explained);
      throw badRequest(
        allowed.length > 0
          ? `unknown query parameter "${name}"; this operation takes ${allowed.join(', ')}`
          : `unknown query parameter "${name}"; this operation takes none`,
      );
    }
    if (params.has(name)) throw badRequest(`query parameter "${name}" is given more than once`);
    params.set(name, value);
  }
  return params;
}

export interface IntegerRule {
  min: number;
  max?: number;
}

/** A whole number in decimal (leading zeros allowed: `03693850` is `3693850`). */
export function integerParam(name: string, value: string | undefined, rule: IntegerRule): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!/^[+-]?\d{1,16}$/.test(trimmed))
    throw badRequest(`query parameter "${name}" must be a whole number, got ${JSON.stringify(value)}`);
  const number = Number(trimmed);
  if (number < rule.min)
    throw badRequest(`query parameter "${name}" must be at least ${rule.min}, got ${number}`);
  if (rule.max !== undefined && number > rule.max) {
    throw badRequest(`query parameter "${name}" must be at most ${rule.max}, got ${number}`);
  }
  return number;
}

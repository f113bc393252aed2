import type { PageFormat } from './result-format.js';

/**
 * `next_uri`: absolute, pinned to the execution (so a refresh between two pages never
 * shifts rows), carrying every result parameter given with the new offset, keys sorted.
 * `api_key` is never in it. The path keeps the prefix the request came in on (/v1 or
 * /api/v1): the Python client insists that next_uri start with its own base.
 */
export function nextUri(
  base: string,
  prefix: string,
  executionId: string,
  format: PageFormat,
  given: ReadonlyMap<string, string>,
  offset: number,
): string {
  const params = new Map(given);
  params.set('offset', String(offset));
  const query = [...params.keys()]
    .sort()
    .map((key) => `${encodeURIComponent(key)}=${encodeURIComponent(params.get(key) as string)}`)
    .join('&');
  const path = `${prefix}/execution/${executionId}/results${format.pathSuffix}`;
  return `${base}${path}?${query}`;
}

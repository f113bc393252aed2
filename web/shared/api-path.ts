/**
 * A path of the API with its query string: `withQuery('/v1/execution/X/results', {limit: 100})`
 * is `/v1/execution/X/results?limit=100`. Parameters without a value are left out.
 */
export function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') query.set(name, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

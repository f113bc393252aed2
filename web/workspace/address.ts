/**
 * What the page's address names: `#query=ID` a saved query, `#execution=ID` an execution's
 * result. The address follows what is open, so that a reload or a shared link opens it again.
 */

export type Address = { query: number } | { execution: string };

/** What a hash (`#query=12`) names; undefined for anything else. */
export function readAddress(hash: string): Address | undefined {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const query = params.get('query');
  if (query && /^\d+$/.test(query)) return { query: Number(query) };
  const execution = params.get('execution');
  return execution ? { execution } : undefined;
}

/** The hash that names `address`: `#query=12`, `#execution=01J…`, or '' for nothing. */
export function addressHash(address: Address | undefined): string {
  if (!address) return '';
  return 'query' in address ? `#query=${address.query}` : `#execution=${address.execution}`;
}

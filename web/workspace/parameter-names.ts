/**
 * The parameter names of a query, in order of first use: what lies between `{{` and `}}`,
 * trimmed, as the service reads them (src/queries/parameters.ts).
 */
export function parameterNames(sql: string): string[] {
  const names: string[] = [];
  for (const match of sql.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)) {
    const name = match[1] as string;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

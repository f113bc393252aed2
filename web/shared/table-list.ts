import type { Api } from './api.js';
import type { TableEntry, TableList } from './api-types.js';

/** Tables asked for per request: the list's pages are followed to the end. */
const PAGE = 10_000;

/** Every table GET /v1/tables lists: the caller's own and other accounts' public ones. */
export async function allTables(api: Api): Promise<TableEntry[]> {
  const tables: TableEntry[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const page: TableList = await api.get<TableList>(`/v1/tables?limit=${PAGE}&offset=${offset}`);
    tables.push(...page.tables);
    offset = page.next_offset;
  }
  return tables;
}

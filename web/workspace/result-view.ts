import { type ExecutionStatus, STATES } from '../shared/api-types.js';
import { filterName } from './result-values.js';

/**
 * What the grid shows of a result: its filters and sort. The chart and the downloads read
 * the same rows, so they ask the service with the same parameters.
 */

export interface Sort {
  column: string;
  descending: boolean;
}

export interface ResultView {
  status: ExecutionStatus;
  filters: string;
  sort: Sort | undefined;
}

/** A click on a column's header sorts by it ascending, then descending, then not at all. */
export function nextSort(sort: Sort | undefined, column: string): Sort | undefined {
  if (sort?.column !== column) return { column, descending: false };
  return sort.descending ? undefined : { column, descending: true };
}

/** The query string of the view's filters and sort (GET /execution/{id}/results and its files). */
export function viewParameters(view: ResultView): Record<string, string | undefined> {
  return {
    filters: view.filters || undefined,
    sort_by: view.sort
      ? `${filterName(view.sort.column)} ${view.sort.descending ? 'DESC' : 'ASC'}`
      : undefined,
    allow_partial_results: view.status.state === STATES.completedPartial ? 'true' : undefined,
  };
}

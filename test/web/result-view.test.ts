import { describe, expect, it } from 'vitest';
import type { ExecutionStatus } from '../../web/shared/api-types.js';
import { nextSort, type ResultView, type Sort, viewParameters } from '../../web/workspace/result-view.js';

/** The grid's sort and filters, as the grid, the chart and the downloads ask for rows (web/workspace/result-view.ts). */

const status = (state: string) => ({ execution_id: 'E1', state }) as ExecutionStatus;

describe('nextSort', () => {
  it.each<[Sort | undefined, string, Sort | undefined]>([
    [undefined, 'n', { column: 'n', descending: false }],
    [{ column: 'n', descending: false }, 'n', { column: 'n', descending: true }],
    // Third click: the result's own order again.
    [{ column: 'n', descending: true }, 'n', undefined],
    // Another column starts ascending, whatever the current sort.
    [{ column: 'n', descending: true }, 'sq', { column: 'sq', descending: false }],
    [{ column: 'n', descending: false }, 'N', { column: 'N', descending: false }],
  ])('%j, a click on %j → %j', (sort, column, expected) => {
    expect(nextSort(sort, column)).toEqual(expected);
  });
});

describe('viewParameters', () => {
  const view = (filters: string, sort: Sort | undefined, state = 'QUERY_STATE_COMPLETED'): ResultView => ({
    status: status(state),
    filters,
    sort,
  });
  it.each<[ResultView, Record<string, string | undefined>]>([
    [view('', undefined), { filters: undefined, sort_by: undefined, allow_partial_results: undefined }],
    [
      view("label = 'x'", { column: 'n', descending: true }),
      { filters: "label = 'x'", sort_by: '"n" DESC', allow_partial_results: undefined },
    ],
    // Column names are always quoted, doubled quotes inside, so any name sorts.
    [
      view('', { column: 'say "hi"', descending: false }),
      { filters: undefined, sort_by: '"say ""hi""" ASC', allow_partial_results: undefined },
    ],
    // A truncated result is read as it is.
    [
      view('', undefined, 'QUERY_STATE_COMPLETED_PARTIAL'),
      { filters: undefined, sort_by: undefined, allow_partial_results: 'true' },
    ],
  ])('%#', (input, expected) => {
    expect(viewParameters(input)).toEqual(expected);
  });
});

import type { Api } from '../shared/api.js';
import { withQuery } from '../shared/api-path.js';
import { type ResultView, viewParameters } from './result-view.js';

/**
 * Downloads of the result as the grid shows it (its filters and sort, every row): CSV from
 * /results/csv, Parquet from /results/parquet. Fetched with the key in a header, then handed
 * to the browser as a file, so the key never appears in a link.
 */

export type DownloadFormat = 'csv' | 'parquet';

export function downloadPath(view: ResultView, format: DownloadFormat): string {
  const id = encodeURIComponent(view.status.execution_id);
  return withQuery(`/v1/execution/${id}/results/${format}`, {
    ...viewParameters(view),
    // A file holds every row: the per-request cap is for pages of JSON.
    ignore_max_datapoints_per_request: format === 'csv' ? 'true' : undefined,
  });
}

export async function download(api: Api, view: ResultView, format: DownloadFormat): Promise<void> {
  const blob = await api.file(
    downloadPath(view, format),
    format === 'csv' ? 'text/csv' : 'application/vnd.apache.parquet',
  );
  const query = view.status.query_id ? `query-${view.status.query_id}-` : '';
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = `${query}${view.status.execution_id.toLowerCase()}.${format}`;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has taken the file once the click is handled.
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

import { shownType } from '../../tables/csv-column-types.js';
import type { UploadOptions } from '../../tables/upload-options.js';
import type { StoredUpload } from '../../tables/upload-store.js';
import { describeWidening } from '../../tables/upload-typing.js';

/**
 * The upload's answer: the mirrored API's `success` and `table_name` (what both official
 * clients read), then what was stored: rows, each column's type, and the columns a few values
 * made text, each with the first of those values and its line.
 */
export function uploadAnswer(stored: StoredUpload, options: UploadOptions, label: string) {
  return {
    success: true,
    table_name: stored.tableName,
    ...(options.dryRun ? { dry_run: true } : {}),
    row_count: stored.rowCount,
    columns: stored.columns,
    widened: stored.widened.map((widening) => ({
      column: widening.column,
      value: widening.value,
      line: widening.line,
      values: widening.count,
      type: 'varchar',
      otherwise: shownType(widening.otherwise),
      message: describeWidening(widening, label),
    })),
  };
}

/**
 * What every benchmark reports: one row per measured case, with its baseline measured in
 * the same run on the same machine, and the ratio between them.
 */
export interface BenchRow {
  benchmark: string;
  case: string;
  /** The measured value (median of the runs). */
  value: number;
  unit: string;
  /** The baseline's value, measured in the same run. */
  baseline?: { name: string; value: number };
  /** value / baseline (or baseline / value for rates): above 1 means slower than the baseline. */
  ratio?: number;
  target?: string;
  note?: string;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function format(value: number, unit: string): string {
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${unit}`;
}

/** A Markdown table, so the output can be pasted into BENCHMARKS.md as is. */
export function renderTable(rows: readonly BenchRow[]): string {
  const header = ['benchmark', 'case', 'measured', 'baseline', 'ratio', 'target', 'note'];
  const lines = rows.map((row) => [
    row.benchmark,
    row.case,
    format(row.value, row.unit),
    row.baseline ? `${row.baseline.name}: ${format(row.baseline.value, row.unit)}` : '',
    row.ratio === undefined ? '' : `${row.ratio.toFixed(2)}×`,
    row.target ?? '',
    row.note ?? '',
  ]);
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((line) => (line[i] ?? '').length)));
  const render = (line: string[]) => `| ${line.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [render(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(render)].join(
    '\n',
  );
}

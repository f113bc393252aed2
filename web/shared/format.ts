/** How numbers, sizes, durations and times are shown, on every page alike. */

export const numberFormat = new Intl.NumberFormat('en-US');

export function formatBytes(text: string | number): string {
  const bytes = Number(text);
  if (!Number.isFinite(bytes)) return String(text);
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  if (unit === 0) return bytes === 1 ? '1 byte' : `${numberFormat.format(bytes)} bytes`;
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.floor((ms % 60_000) / 1000)} s`;
}

export const plural = (count: number, one: string, many = `${one}s`) =>
  `${numberFormat.format(count)} ${count === 1 ? one : many}`;

/** A time as the API gives it (`2024-01-31T12:00:05.123Z`) to the minute: `2024-01-31 12:00 UTC`. */
export function when(iso: string | null): string {
  if (!iso) return 'never';
  return iso.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
}

/**
 * A DECIMAL's text from its integer and scale, digit for digit, as DuckDB writes it
 * (`CAST(x AS VARCHAR)`: the declared scale kept, `0.05`, `-12.50`) and PostgreSQL's numeric
 * too: the pages' JSON (src/executions/json-rows.ts) and the wire protocol (src/pgwire).
 */
export function decimalText(unscaled: bigint, scale: number): string {
  if (scale === 0) return unscaled.toString();
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

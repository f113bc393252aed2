import { distance } from 'fastest-levenshtein';

/**
 * "Did you mean": the candidates nearest to a name that matched none, best first. A leaf
 * module (the filter language's `columns`, `filters` and `sort_by`, and users' SQL through
 * queries/sandbox/name-suggestions.ts), given only names the caller may see.
 *
 * Near means, ignoring case: the same name (`Total_tvl`), the name as one word of a longer
 * one (`trades` for `dataset_trades`, `amount` for `amount_usd`), or a few typing mistakes
 * away: a Levenshtein distance of at most a quarter of the name's length, at least 1
 * (`nme` → `name`, `avs_nmae` → `avs_name`; `dataset_price` is near `dataset_prices`, not
 * `dataset_trades`).
 */
export function nearestNames(name: string, candidates: readonly string[], max = 3): string[] {
  const folded = name.toLowerCase();
  const limit = Math.max(1, Math.floor(folded.length / 4));
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of new Set(candidates)) {
    const other = candidate.toLowerCase();
    if (other === folded) scored.push({ candidate, score: 0 });
    else if (folded.length >= 3 && isWordOf(folded, other)) scored.push({ candidate, score: 1 });
    else {
      const apart = distance(folded, other);
      if (apart <= limit) scored.push({ candidate, score: 1 + apart });
    }
  }
  return scored
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, max)
    .map((entry) => entry.candidate);
}

/** `trades` in `dataset_trades`, `amount` in `amount_usd`: a whole `_`-separated part, at either end. */
function isWordOf(word: string, name: string): boolean {
  return name.endsWith(`_${word}`) || name.startsWith(`${word}_`);
}

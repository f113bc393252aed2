/**
 * The benchmark data sets' deterministic randomness: one linear congruential generator (the
 * same numbers on every machine and run), and hex strings drawn from it.
 */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** Lowercase hex digits of the given length, drawn from `random`. */
export function randomHex(random: () => number, length: number): string {
  let out = '';
  while (out.length < length)
    out += Math.floor(random() * 0xffffffff)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, length);
}

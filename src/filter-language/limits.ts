/** DESIGN.md §7: bounds that keep parsing cheap and the recursive stages shallow. */
export const MAX_TEXT_BYTES = 4096;
export const MAX_NESTING_DEPTH = 32;
export const MAX_LIST_ITEMS = 1000;
/** Exact numbers (integer, decimal, bignum columns) are kept as BigInts: bound their size. */
export const MAX_NUMBER_DIGITS = 1000;

import { isLosslessNumber, type LosslessNumber, parse } from 'lossless-json';

/**
 * DuckDB's parse tree as `json_serialize_sql` writes it, read and written back without
 * passing any number through a JavaScript double: the tree holds integer constants
 * (`9007199254740993`) and uint64 positions as JSON numbers, and a round trip through
 * `JSON.parse` silently changes them (LIBRARY-NOTES, "DuckDB, measured for users' SQL").
 * Numbers stay `LosslessNumber`s, which keep their text.
 */
export type TreeValue = string | boolean | null | LosslessNumber | TreeValue[] | TreeObject;
export interface TreeObject {
  [key: string]: TreeValue;
}

/** Reads a tree; undefined when it nests deeper than `maxDepth` objects and arrays. */
export function readTree(json: string, maxDepth: number): TreeValue | undefined {
  // lossless-json's parser recurses once per level and overflows the stack between 3,000 and
  // 6,000 levels (measured): the depth is checked on the text first, in one linear pass.
  if (nestingDepth(json) > maxDepth) return undefined;
  return parse(json) as TreeValue;
}

/** How deeply objects and arrays nest in a JSON text (strings skipped). */
export function nestingDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code === 0x22) {
      // A string: skip to its closing quote, past escaped characters.
      for (i++; i < json.length; i++) {
        const inner = json.charCodeAt(i);
        if (inner === 0x5c) i++;
        else if (inner === 0x22) break;
      }
    } else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (code === 0x7d || code === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Writes a tree as JSON, numbers as the text they were read from. Hand-written because
 * lossless-json's `stringify` took 390 ms for a 1.7 MB tree here, against 10–20 ms for this.
 */
export function writeTree(value: TreeValue): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join('');
}

function write(value: TreeValue, parts: string[]): void {
  if (value === null) parts.push('null');
  else if (typeof value === 'string') parts.push(JSON.stringify(value));
  else if (typeof value === 'boolean') parts.push(value ? 'true' : 'false');
  else if (isLosslessNumber(value)) parts.push(value.value);
  else if (Array.isArray(value)) {
    parts.push('[');
    value.forEach((item, i) => {
      if (i > 0) parts.push(',');
      write(item, parts);
    });
    parts.push(']');
  } else {
    parts.push('{');
    let first = true;
    for (const [key, item] of Object.entries(value)) {
      if (!first) parts.push(',');
      first = false;
      parts.push(JSON.stringify(key), ':');
      write(item, parts);
    }
    parts.push('}');
  }
}

export const isTreeObject = (value: TreeValue | undefined): value is TreeObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value);

import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../src/log.js';

/** A logger at `level` whose JSON lines the test reads back, as they are written. */
export function capturedLog<T = { level: number; msg: string }>(
  level: string,
): { lines: T[]; logger: Logger } {
  const lines: T[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as T);
      done();
    },
  });
  return { lines, logger: pino({ level }, sink) };
}

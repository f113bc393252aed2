import { pino } from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs on stdout. Nothing that could hold a secret is ever passed in. */
export function createLogger(level = 'info'): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
}

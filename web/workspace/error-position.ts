/**
 * Where in the text a message from the service points, 0-based: "… at position N" (the
 * service's own messages: the sandbox's refusals, the filter language's errors), or DuckDB's
 * "LINE n:" with a caret under the spot.
 */

/** The position a message gives as "at position N"; undefined when it gives none. */
export function messagePosition(message: string): number | undefined {
  const match = /\bat position (\d+)/.exec(message);
  return match ? Number(match[1]) : undefined;
}

/** Where in the SQL a refusal or a failure points, if the message says. */
export function sqlErrorPosition(message: string, sql: string): number | undefined {
  const at = messagePosition(message);
  if (at !== undefined) return at;
  const line = /LINE (\d+): (.*)\n( *)\^/.exec(message);
  if (!line) return undefined;
  const lineNumber = Number(line[1]);
  const column = (line[3] as string).length - `LINE ${line[1]}: `.length;
  const lines = sql.split('\n');
  if (lineNumber < 1 || lineNumber > lines.length || column < 0) return undefined;
  let offset = 0;
  for (let i = 0; i < lineNumber - 1; i++) offset += (lines[i] as string).length + 1;
  // DuckDB shows a long line shortened around the spot; then only the line is known.
  return (line[2] as string) === lines[lineNumber - 1] ? offset + column : offset;
}

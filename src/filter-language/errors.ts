/** The three result parameters written in the query language. */
export type QueryParameter = 'filters' | 'sort_by' | 'columns';

/**
 * A client error in `filters`, `sort_by` or `columns`. The message is complete on its own
 * (`filters: unknown column "foo" at position 0; valid columns: ...`) because the results
 * layer sends it to the client unchanged as a 400. `position` is a 0-based index in code
 * points into the text the client sent.
 */
export class QueryLanguageError extends Error {
  override readonly name = 'QueryLanguageError';

  constructor(
    readonly parameter: QueryParameter,
    readonly position: number,
    readonly detail: string,
    readonly hint?: string,
  ) {
    super(`${parameter}: ${detail} at position ${position}${hint === undefined ? '' : `; ${hint}`}`);
  }
}

/**
 * The text of one parameter as the client sent it. Every stage reports errors through it so
 * that positions are always given in the original string, whatever rewriting happened.
 */
export class SourceText {
  constructor(
    readonly parameter: QueryParameter,
    readonly text: string,
  ) {}

  /** `index` is a UTF-16 index into `text`; clients count characters, so report code points. */
  error(index: number, detail: string, hint?: string): QueryLanguageError {
    const clamped = Math.max(0, Math.min(index, this.text.length));
    let position = 0;
    for (let i = 0; i < clamped; i++) {
      const unit = this.text.charCodeAt(i);
      // The high half of a surrogate pair starts a character; its low half does not.
      if (unit < 0xdc00 || unit > 0xdfff || i === 0 || !isHighSurrogate(this.text.charCodeAt(i - 1))) {
        position++;
      }
    }
    return new QueryLanguageError(this.parameter, position, detail, hint);
  }
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

const MAX_ECHO = 40;

/**
 * Quotes a piece of the client's input for an error message: shortened, so that a 4 KB
 * identifier does not come back as a 4 KB message, and with control characters made visible.
 */
export function echo(text: string, quote = "'"): string {
  const chars = [...text];
  const shown = chars.length > MAX_ECHO ? `${chars.slice(0, MAX_ECHO).join('')}…` : text;
  let visible = '';
  for (const c of shown) {
    const code = c.charCodeAt(0);
    visible += code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : c;
  }
  return `${quote}${visible}${quote}`;
}

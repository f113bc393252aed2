import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  closeCompletion,
  completionKeymap,
} from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { PostgreSQL, type SQLNamespace, sql } from '@codemirror/lang-sql';
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  placeholder,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import type { TableEntry } from '../shared/api-types.js';

/**
 * The SQL editor: CodeMirror 6 with SQL highlighting (PostgreSQL's dialect is the closest to
 * DuckDB's), completion of the caller's tables and columns, and Ctrl/Cmd+Enter to run. Tab
 * is left to the browser, so keyboard users can move on from the editor.
 *
 * The editor lives in a shadow root: CodeMirror injects its styles as a <style> element into
 * a document, which the page's content security policy (style-src 'self') refuses, but into
 * a shadow root as a constructed style sheet, which the policy allows. The page's colours
 * reach it through CSS custom properties, which cross the shadow boundary.
 */

/** Colours come from the page's CSS variables, so the light and dark themes both apply. */
const highlighting = HighlightStyle.define([
  { tag: tags.keyword, color: 'var(--syntax-keyword)', fontWeight: '600' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--syntax-string)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--syntax-number)' },
  { tag: [tags.lineComment, tags.blockComment], color: 'var(--syntax-comment)', fontStyle: 'italic' },
  { tag: [tags.typeName, tags.standard(tags.name)], color: 'var(--syntax-type)' },
  { tag: [tags.operator, tags.punctuation, tags.bracket], color: 'var(--syntax-operator)' },
  { tag: tags.special(tags.name), color: 'var(--syntax-name)' },
]);

const theme = EditorView.theme({
  '&': { fontSize: '14px', backgroundColor: 'var(--background)', color: 'var(--text)' },
  '.cm-content': { fontFamily: 'var(--mono)', caretColor: 'var(--text)', minHeight: '10rem' },
  '.cm-gutters': {
    backgroundColor: 'var(--surface)',
    color: 'var(--muted)',
    borderRight: '1px solid var(--border)',
  },
  '.cm-activeLine': { backgroundColor: 'var(--active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--active-line)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: 'var(--selection)' },
  '.cm-scroller': { overflow: 'auto', maxHeight: '50vh' },
  // @codemirror/lint draws its marks as data: images, which img-src 'self' refuses: CSS instead.
  '.cm-lintRange-error': {
    backgroundImage: 'none',
    textDecoration: 'underline wavy var(--danger)',
    textDecorationSkipInk: 'none',
    textUnderlineOffset: '3px',
  },
  '.cm-lint-marker-error': {
    content: 'normal',
    boxSizing: 'border-box',
    width: '0.8em',
    height: '0.8em',
    margin: '0.2em 0.1em',
    borderRadius: '50%',
    background: 'var(--danger)',
  },
  '.cm-diagnostic-error': { borderLeftColor: 'var(--danger)' },
  '.cm-tooltip': {
    backgroundColor: 'var(--surface)',
    color: 'var(--text)',
    border: '1px solid var(--border)',
  },
});

export interface EditorEvents {
  run(): void;
  change(): void;
}

export class SqlEditor {
  readonly view: EditorView;
  private readonly language = new Compartment();

  constructor(parent: HTMLElement, events: EditorEvents) {
    const run = (view: EditorView) => {
      // A completion list left open would cover the result's first lines.
      closeCompletion(view);
      events.run();
      return true;
    };
    const root = parent.attachShadow({ mode: 'open' });
    this.view = new EditorView({
      parent: root,
      root,
      state: EditorState.create({
        doc: '',
        extensions: [
          Prec.highest(keymap.of([{ key: 'Mod-Enter', run, preventDefault: true }])),
          lineNumbers(),
          highlightActiveLineGutter(),
          history(),
          drawSelection(),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          autocompletion(),
          highlightActiveLine(),
          lintGutter(),
          syntaxHighlighting(highlighting),
          keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap]),
          this.language.of(sql({ dialect: PostgreSQL })),
          placeholder('SELECT * FROM namespace.table LIMIT 100   — Ctrl+Enter runs it'),
          theme,
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-label': 'SQL query' }),
          EditorView.updateListener.of((update) => {
            // A message about the SQL stays where it was: CodeMirror maps it through edits.
            if (update.docChanged) events.change();
          }),
        ],
      }),
    });
  }

  get text(): string {
    return this.view.state.doc.toString();
  }

  /** Replaces the whole text; the cursor goes to its end, to go on typing. */
  set text(value: string) {
    this.view.dispatch({
      changes: { from: 0, to: this.view.state.doc.length, insert: value },
      selection: { anchor: value.length },
    });
  }

  /** Replaces the selection (or inserts at the cursor), then puts the cursor after it. */
  insert(text: string): void {
    const range = this.view.state.selection.main;
    this.view.dispatch({
      changes: { from: range.from, to: range.to, insert: text },
      selection: { anchor: range.from + text.length },
      scrollIntoView: true,
    });
    this.view.focus();
  }

  /** Completion of `namespace.table` and their columns. */
  setTables(tables: readonly TableEntry[]): void {
    const schema: SQLNamespace = {};
    for (const table of tables) {
      const namespace = (schema[table.namespace] ?? {}) as Record<string, SQLNamespace>;
      namespace[table.table_name] = table.columns.map((c) => c.name);
      schema[table.namespace] = namespace;
    }
    this.view.dispatch({
      effects: this.language.reconfigure(sql({ dialect: PostgreSQL, schema, upperCaseKeywords: true })),
    });
  }

  /**
   * Marks the service's message at a position of the SQL (0-based, in characters): the word
   * there is underlined, the cursor put on it. Without a position the message alone says it.
   */
  showError(message: string, position?: number): void {
    const length = this.view.state.doc.length;
    if (position === undefined || position < 0 || position > length) {
      this.clearError();
      return;
    }
    const line = this.view.state.doc.lineAt(position);
    const word = /^[\w$"'.]+/.exec(this.view.state.sliceDoc(position, line.to));
    const to = Math.min(length, position + (word?.[0].length ?? 1));
    const from = to > position ? position : Math.max(0, position - 1);
    this.view.dispatch({ selection: { anchor: position }, scrollIntoView: true });
    this.view.dispatch(setDiagnostics(this.view.state, [{ from, to, severity: 'error', message }]));
  }

  clearError(): void {
    this.view.dispatch(setDiagnostics(this.view.state, []));
  }

  focus(): void {
    this.view.focus();
  }
}

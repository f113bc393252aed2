import type { ParameterType, QueryParameter } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { parameterNames } from './parameter-names.js';

/**
 * A form field for each `{{name}}` of the SQL (DESIGN §10): its type and its value. Fields
 * follow the text as it is edited, and keep what was typed for a name that stays.
 */

const TYPES: ParameterType[] = ['text', 'number', 'datetime', 'enum'];

export class ParametersForm {
  private readonly known = new Map<string, QueryParameter>();
  private names: string[] = [];

  constructor(
    private readonly container: HTMLElement,
    private readonly fields: HTMLElement,
  ) {}

  /** Saved parameters of an opened query: their types and default values. */
  load(parameters: readonly QueryParameter[]): void {
    this.known.clear();
    for (const p of parameters)
      this.known.set(p.key, { ...p, enumOptions: p.enumOptions ? [...p.enumOptions] : undefined });
  }

  /** Re-draws the fields for the SQL's parameters. */
  update(sql: string): void {
    const names = parameterNames(sql);
    if (names.length === this.names.length && names.every((n, i) => n === this.names[i])) return;
    this.read();
    this.names = names;
    this.container.hidden = names.length === 0;
    this.fields.replaceChildren(...names.map((name, i) => this.field(name, i)));
  }

  get hasParameters(): boolean {
    return this.names.length > 0;
  }

  /** The parameters as saved with a query. */
  parameters(): QueryParameter[] {
    this.read();
    return this.names.map((name) => this.known.get(name) ?? { key: name, type: 'text', value: '' });
  }

  /** The values to run with: `{name: value}`. */
  values(): Record<string, string> {
    return Object.fromEntries(this.parameters().map((p) => [p.key, p.value]));
  }

  private read(): void {
    for (const row of this.fields.querySelectorAll<HTMLElement>('.parameter')) {
      const key = row.dataset.name ?? '';
      const type = (row.querySelector<HTMLSelectElement>('select')?.value ?? 'text') as ParameterType;
      const value = row.querySelector<HTMLInputElement>('input.value')?.value ?? '';
      const options = row.querySelector<HTMLInputElement>('input.options')?.value ?? '';
      const enumOptions = options
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== '');
      this.known.set(key, { key, type, value, ...(type === 'enum' ? { enumOptions } : {}) });
    }
  }

  private field(name: string, index: number): HTMLElement {
    const saved = this.known.get(name) ?? { key: name, type: 'text' as ParameterType, value: '' };
    const id = `parameter-${index}`;
    const placeholderFor = (type: ParameterType) =>
      type === 'datetime'
        ? '2024-01-31 00:00:00'
        : type === 'number'
          ? '42'
          : type === 'enum'
            ? 'one of the options'
            : '';
    const value = h('input', {
      id,
      class: 'value',
      type: 'text',
      value: saved.value,
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: placeholderFor(saved.type),
    });
    const options = h('input', {
      class: 'options',
      type: 'text',
      value: (saved.enumOptions ?? []).join(', '),
      'aria-label': `Options of ${name}, separated by commas`,
      placeholder: 'options, separated, by commas',
      hidden: saved.type !== 'enum',
    });
    const type = h(
      'select',
      {
        'aria-label': `Type of ${name}`,
        onchange: () => {
          options.hidden = type.value !== 'enum';
          value.placeholder = placeholderFor(type.value as ParameterType);
        },
      },
      ...TYPES.map((t) => h('option', { value: t, selected: t === saved.type }, t)),
    );
    return h(
      'div',
      { class: 'parameter', 'data-name': name },
      h('label', { for: id }, name),
      type,
      value,
      options,
    );
  }
}

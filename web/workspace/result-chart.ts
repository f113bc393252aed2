import type * as PlotLibrary from '@observablehq/plot';
import { type Api, ApiError, withQuery } from './api.js';
import type { CellValue, ResultsPage } from './api-types.js';
import { h } from './dom.js';
import { cellText, isNumericType, isTemporalType, numberFormat } from './format.js';
import { ResultsGrid, type ResultView } from './results-grid.js';

/**
 * Charts of the result, drawn by Observable Plot as SVG: line, bar or scatter, one x column
 * and one or more y columns, over the rows the grid's filters select, in its sort order.
 */

export type ChartKind = 'line' | 'bar' | 'scatter';

type Plot = typeof import('./chart-library.js');

/**
 * Observable Plot and d3 are 40% of the page's script and only the chart needs them: they
 * load the first time a chart is drawn (a separate file of the bundle), not with the page.
 */
let library: Promise<Plot> | undefined;
function loadPlot(): Promise<Plot> {
  library ??= import('./chart-library.js');
  library.catch(() => {
    library = undefined;
  });
  return library;
}

/** Rows drawn at most: more would not be readable, and a page of them is fetched at once. */
export const CHART_ROWS = 10_000;

/** The chart's left margin, in its own pixels, when the y labels fit in it. */
const MARGIN_LEFT = 64;

/**
 * How far (in the chart's own pixels) the y-axis labels of a drawn chart reach left of it;
 * 0 when they fit, or when the chart is not laid out.
 */
function yLabelsOverflow(figure: Element): number {
  const svg = figure instanceof SVGSVGElement ? figure : figure.querySelector('svg.chart');
  const labels = svg?.querySelector('g[aria-label="y-axis tick label"]');
  if (!svg || !labels) return 0;
  const box = svg.getBoundingClientRect();
  const width = Number(svg.getAttribute('width'));
  if (box.width === 0 || !width) return 0;
  // The chart may be scaled down to fit (max-width: 100%): back to its own pixels.
  return ((box.left - labels.getBoundingClientRect().left) * width) / box.width;
}

interface Point {
  x: Date | number | string;
  y: number;
  series: string;
}

/** An API value as a chart coordinate: timestamps ('… UTC') and dates as dates, numbers as numbers. */
function coordinate(value: CellValue, type: string): Date | number | string | undefined {
  if (value === null) return undefined;
  if (isTemporalType(type) && typeof value === 'string') {
    const iso = value.replace(' UTC', 'Z').replace(' ', 'T');
    const date = new Date(/^\d{4}-\d\d-\d\d$/.test(iso) ? `${iso}T00:00:00Z` : iso);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  if (isNumericType(type)) {
    const number = Number(value);
    return Number.isFinite(number) ? number : undefined;
  }
  return cellText(value);
}

export class ResultChart {
  private view: ResultView | undefined;
  private columns: { name: string; type: string }[] = [];
  private generation = 0;
  private resize: ResizeObserver;
  private lastWidth = 0;
  /** What was drawn last: a new width draws it again without asking the service. */
  private drawn: { plot: Plot; kind: ChartKind; x: string; ys: string[]; points: Point[] } | undefined;

  constructor(
    private readonly api: () => Api,
    private readonly parts: {
      kind: HTMLSelectElement;
      x: HTMLSelectElement;
      y: HTMLFieldSetElement;
      note: HTMLElement;
      figure: HTMLElement;
    },
    private readonly isVisible: () => boolean,
  ) {
    parts.kind.addEventListener('change', () => void this.draw());
    parts.x.addEventListener('change', () => void this.draw());
    parts.y.addEventListener('change', () => void this.draw());
    this.resize = new ResizeObserver(() => {
      const width = parts.figure.clientWidth;
      if (Math.abs(width - this.lastWidth) > 40 && this.isVisible() && this.drawn) {
        const { plot, kind, x, ys, points } = this.drawn;
        this.render(plot, kind, x, ys, points);
      }
    });
    this.resize.observe(parts.figure);
  }

  /** A new result, or new filters or sort: keeps the chosen columns that still exist. */
  setView(view: ResultView, columns: { name: string; type: string }[]): void {
    const sameColumns =
      columns.length === this.columns.length && columns.every((c, i) => c.name === this.columns[i]?.name);
    this.view = view;
    if (!sameColumns) {
      this.columns = columns;
      this.fillChoices();
    }
    if (this.isVisible()) void this.draw();
  }

  clear(): void {
    this.view = undefined;
    this.columns = [];
    this.generation++;
    this.drawn = undefined;
    this.parts.figure.replaceChildren();
    this.parts.note.textContent = '';
    this.fillChoices();
  }

  private fillChoices(): void {
    const { x, y } = this.parts;
    const temporal = this.columns.find((c) => isTemporalType(c.type));
    const defaultX = temporal ?? this.columns[0];
    x.replaceChildren(
      ...this.columns.map((c) => h('option', { value: c.name, selected: c === defaultX }, c.name)),
    );
    const numeric = this.columns.filter((c) => isNumericType(c.type));
    const defaultY = numeric.find((c) => c !== defaultX);
    const legend = y.querySelector('legend');
    y.replaceChildren(...(legend ? [legend] : []));
    if (numeric.length === 0)
      y.append(h('p', { class: 'hint' }, 'The result has no numeric column to plot.'));
    for (const column of numeric) {
      y.append(
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'checkbox', value: column.name, checked: column === defaultY }),
          column.name,
        ),
      );
    }
  }

  private choice(): { kind: ChartKind; x: string; ys: string[] } {
    const ys = [...this.parts.y.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map(
      (i) => i.value,
    );
    return { kind: this.parts.kind.value as ChartKind, x: this.parts.x.value, ys };
  }

  /** Fetches the chosen columns (up to CHART_ROWS rows) and draws them. */
  async draw(): Promise<void> {
    const view = this.view;
    if (!view) return;
    const { kind, x, ys } = this.choice();
    const generation = ++this.generation;
    if (!x || ys.length === 0) {
      this.drawn = undefined;
      this.parts.figure.replaceChildren();
      this.parts.note.textContent = 'Choose an x column and at least one y column.';
      return;
    }
    const columns = [x, ...ys.filter((y) => y !== x)];
    let page: ResultsPage;
    let plot: Plot;
    try {
      [plot, page] = await Promise.all([
        loadPlot(),
        this.api().get<ResultsPage>(
          withQuery(`/v1/execution/${encodeURIComponent(view.status.execution_id)}/results`, {
            columns: columns.map((c) => `"${c.replaceAll('"', '""')}"`).join(','),
            limit: CHART_ROWS,
            ...ResultsGrid.parameters(view),
          }),
        ),
      ]);
    } catch (error) {
      if (generation !== this.generation) return;
      this.drawn = undefined;
      this.parts.figure.replaceChildren();
      this.parts.note.textContent = `The chart could not be drawn: ${error instanceof ApiError ? error.message : String(error)}`;
      return;
    }
    if (generation !== this.generation || !page.result) return;
    const types = new Map(
      page.result.metadata.column_names.map((n, i) => [n, page.result?.metadata.column_types[i] ?? '']),
    );
    const xType = types.get(x) ?? '';
    const points: Point[] = [];
    for (const row of page.result.rows) {
      const xValue =
        kind === 'bar'
          ? row[x] === null
            ? undefined
            : cellText(row[x] as CellValue)
          : coordinate(row[x] as CellValue, xType);
      if (xValue === undefined) continue;
      for (const y of ys) {
        const yValue = coordinate(row[y] as CellValue, types.get(y) ?? '');
        if (typeof yValue === 'number') points.push({ x: xValue, y: yValue, series: y });
      }
    }
    const total = page.result.metadata.total_row_count;
    this.parts.note.textContent =
      total > page.result.rows.length
        ? `Drawn from the first ${numberFormat.format(page.result.rows.length)} of ${numberFormat.format(total)} rows.`
        : '';
    this.render(plot, kind, x, ys, points);
  }

  private render(plot: Plot, kind: ChartKind, x: string, ys: string[], points: Point[]): void {
    this.drawn = { plot, kind, x, ys, points };
    const width = Math.max(320, this.parts.figure.clientWidth);
    this.lastWidth = width;
    let figure = this.plot(plot, kind, x, ys, points, width, MARGIN_LEFT);
    this.parts.figure.replaceChildren(figure);
    // Plot sizes no margin to its labels: wide numbers (180,000,000) would start left of the
    // chart and be cut off by it. Measured once drawn, and drawn again with the room they need.
    const overflow = yLabelsOverflow(figure);
    if (overflow > 0) {
      figure = this.plot(plot, kind, x, ys, points, width, MARGIN_LEFT + Math.ceil(overflow) + 2);
      this.parts.figure.replaceChildren(figure);
    }
  }

  private plot(
    plot: Plot,
    kind: ChartKind,
    x: string,
    ys: string[],
    points: Point[],
    width: number,
    marginLeft: number,
  ): SVGSVGElement | HTMLElement {
    const several = ys.length > 1;
    let marks: PlotLibrary.Markish[];
    const xOptions: PlotLibrary.ScaleOptions = { label: x };
    if (kind === 'line') {
      // A line joins points in x order, whatever order the rows came in.
      const sorted = [...points].sort((a, b) => (a.x < b.x ? -1 : a.x > b.x ? 1 : 0));
      marks = [plot.lineY(sorted, { x: 'x', y: 'y', stroke: 'series', tip: true })];
    } else if (kind === 'bar') {
      const categories = [...new Set(points.map((p) => p.x as string))];
      // Every label of a long axis would overlap: show about 20.
      if (categories.length > 20) {
        const step = Math.ceil(categories.length / 20);
        xOptions.ticks = categories.filter((_, i) => i % step === 0);
      }
      if (categories.some((c) => c.length > 8) || categories.length > 10) xOptions.tickRotate = -30;
      xOptions.domain = categories;
      marks = [plot.barY(points, { x: 'x', y: 'y', fill: 'series', tip: true }), plot.ruleY([0])];
    } else {
      marks = [plot.dot(points, { x: 'x', y: 'y', stroke: 'series', tip: true })];
    }
    const figure = plot.plot({
      className: 'chart',
      width,
      height: 380,
      marginLeft,
      marginBottom: kind === 'bar' && xOptions.tickRotate ? 70 : 40,
      x: xOptions,
      y: { grid: true, label: ys.join(', ') },
      color: { legend: several, domain: ys },
      marks,
      ariaLabel: `${kind} chart of ${ys.join(', ')} by ${x}`,
    });
    // Plot adds <style> elements, which the page's content security policy refuses: their
    // rules are in workspace.css instead. Removed before the figure joins the document.
    for (const style of figure.querySelectorAll('style')) style.remove();
    return figure;
  }
}

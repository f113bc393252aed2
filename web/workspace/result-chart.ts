import type * as PlotLibrary from '@observablehq/plot';
import { type Api, ApiError } from '../shared/api.js';
import { withQuery } from '../shared/api-path.js';
import type { ResultsPage } from '../shared/api-types.js';
import { h } from '../shared/dom.js';
import { numberFormat } from '../shared/format.js';
import { type ChartKind, categoryAxis, chartPoints, type Point } from './chart-points.js';
import { isNumericType, isTemporalType } from './result-values.js';
import { type ResultView, viewParameters } from './result-view.js';

/**
 * Charts of the result, drawn by Observable Plot as SVG: line, bar or scatter, one x column
 * and one or more y columns, over the rows the grid's filters select, in its sort order.
 */

type Plot = typeof import('./chart-library.js');

/** What a chart shows, with the library that draws it. */
interface Drawing {
  plot: Plot;
  kind: ChartKind;
  x: string;
  ys: string[];
  points: Point[];
}

/** Rows drawn at most: more would not be readable, and a page of them is fetched at once. */
export const CHART_ROWS = 10_000;

/** The chart's left margin, in its own pixels, when the y labels fit in it. */
const MARGIN_LEFT = 64;

export class ResultChart {
  /**
   * Observable Plot and d3 are 40% of the page's script and only the chart needs them: they
   * load the first time a chart is drawn (a separate file of the bundle), not with the page.
   */
  private library: Promise<Plot> | undefined;
  private view: ResultView | undefined;
  private columns: { name: string; type: string }[] = [];
  private generation = 0;
  private resize: ResizeObserver;
  private lastWidth = 0;
  /** What was drawn last: a new width draws it again without asking the service. */
  private drawn: Drawing | undefined;

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
        this.render(this.drawn);
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

  private loadPlot(): Promise<Plot> {
    if (!this.library) {
      this.library = import('./chart-library.js');
      this.library.catch(() => {
        this.library = undefined;
      });
    }
    return this.library;
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
      this.showNote('Choose an x column and at least one y column.');
      return;
    }
    let page: ResultsPage;
    let plot: Plot;
    try {
      [plot, page] = await Promise.all([
        this.loadPlot(),
        this.api().get<ResultsPage>(this.rowsPath(view, x, ys)),
      ]);
    } catch (error) {
      if (generation !== this.generation) return;
      this.showNote(
        `The chart could not be drawn: ${error instanceof ApiError ? error.message : String(error)}`,
      );
      return;
    }
    if (generation !== this.generation || !page.result) return;
    const points = chartPoints(page.result, kind, x, ys);
    const total = page.result.metadata.total_row_count;
    this.parts.note.textContent =
      total > page.result.rows.length
        ? `Drawn from the first ${numberFormat.format(page.result.rows.length)} of ${numberFormat.format(total)} rows.`
        : '';
    this.render({ plot, kind, x, ys, points });
  }

  /** The chosen columns' rows, as the grid filters and sorts them. */
  private rowsPath(view: ResultView, x: string, ys: string[]): string {
    const columns = [x, ...ys.filter((y) => y !== x)];
    return withQuery(`/v1/execution/${encodeURIComponent(view.status.execution_id)}/results`, {
      columns: columns.map((c) => `"${c.replaceAll('"', '""')}"`).join(','),
      limit: CHART_ROWS,
      ...viewParameters(view),
    });
  }

  /** No chart: only a note saying why. */
  private showNote(note: string): void {
    this.drawn = undefined;
    this.parts.figure.replaceChildren();
    this.parts.note.textContent = note;
  }

  private render(drawing: Drawing): void {
    this.drawn = drawing;
    const width = Math.max(320, this.parts.figure.clientWidth);
    this.lastWidth = width;
    let figure = plotFigure(drawing, width, MARGIN_LEFT);
    this.parts.figure.replaceChildren(figure);
    // Plot sizes no margin to its labels: wide numbers (180,000,000) would start left of the
    // chart and be cut off by it. Measured once drawn, and drawn again with the room they need.
    const overflow = yLabelsOverflow(figure);
    if (overflow > 0) {
      figure = plotFigure(drawing, width, MARGIN_LEFT + Math.ceil(overflow) + 2);
      this.parts.figure.replaceChildren(figure);
    }
  }
}

/** Plot's marks for a kind of chart, and the options of its x axis. */
function marksOf({ plot, kind, x, points }: Drawing): {
  marks: PlotLibrary.Markish[];
  xOptions: PlotLibrary.ScaleOptions;
} {
  if (kind === 'line') {
    // A line joins points in x order, whatever order the rows came in.
    const sorted = [...points].sort((a, b) => (a.x < b.x ? -1 : a.x > b.x ? 1 : 0));
    return {
      marks: [plot.lineY(sorted, { x: 'x', y: 'y', stroke: 'series', tip: true })],
      xOptions: { label: x },
    };
  }
  if (kind === 'bar') {
    return {
      marks: [plot.barY(points, { x: 'x', y: 'y', fill: 'series', tip: true }), plot.ruleY([0])],
      xOptions: { label: x, ...categoryAxis(points) },
    };
  }
  return {
    marks: [plot.dot(points, { x: 'x', y: 'y', stroke: 'series', tip: true })],
    xOptions: { label: x },
  };
}

/** The chart as Plot draws it, `width` wide, with `marginLeft` for the y axis's labels. */
function plotFigure(drawing: Drawing, width: number, marginLeft: number): SVGSVGElement | HTMLElement {
  const { plot, kind, x, ys } = drawing;
  const { marks, xOptions } = marksOf(drawing);
  const figure = plot.plot({
    className: 'chart',
    width,
    height: 380,
    marginLeft,
    marginBottom: xOptions.tickRotate ? 70 : 40,
    x: xOptions,
    y: { grid: true, label: ys.join(', ') },
    color: { legend: ys.length > 1, domain: ys },
    marks,
    ariaLabel: `${kind} chart of ${ys.join(', ')} by ${x}`,
  });
  // Plot adds <style> elements, which the page's content security policy refuses: their
  // rules are in workspace.css instead. Removed before the figure joins the document.
  for (const style of figure.querySelectorAll('style')) style.remove();
  return figure;
}

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

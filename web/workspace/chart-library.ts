/**
 * What the chart uses of Observable Plot. Imported with import() by result-chart.ts, so that
 * it becomes a file of its own that loads when a chart is first drawn; naming the functions
 * here lets the bundler leave out the rest of Plot (a dynamic import of the package itself
 * would keep all of it).
 */
export { barY, dot, lineY, plot, ruleY } from '@observablehq/plot';

// Charts with Chart.js (bar, line, pie; bundled as `a2ui-vendor/chart`, see
// client/vendor/chart.mjs), loaded on first use. Around the canvas, in HTML: the legend (text
// stays readable on a narrow screen), and a visually hidden data table for screen readers and
// for copying numbers; the canvas itself is an image with a one-line summary as its name.
// Colours, fonts and grid lines come from the client's CSS custom properties, so a chart
// follows the page's theme (and its dark mode). Chart.js sets the canvas size through the
// CSSOM, which the strict CSP (style-src 'self') allows.
import { h, text } from './dom.js';
import { gettext as _, interpolate } from './i18n.js';

const TYPES = ['bar', 'line', 'pie'];
// The server's bounds (a2ui/protocol/drawn.py), applied here too because sessions stored before
// the server enforced them are replayed: a value near the double range (a pie slice of 1e308)
// made Chart.js loop for minutes. Beyond them values are clamped and items left out.
export const MAX_DRAWN = 1e15;
export const MAX_SERIES = 20;
export const MAX_POINTS = 1000;
// A bare specifier (resolved by the page's import map) kept in a constant: collectstatic rewrites
// a dynamic import of a string literal to a hashed static path, which a bare specifier is not.
const CHART = 'a2ui-vendor/chart';
let loading = null;

function load() {
  loading ??= import(CHART).then((module) => module.Chart);
  return loading;
}

function num(value) {
  const n = Number(value);
  return Number.isFinite(n) ? Math.min(Math.max(n, -MAX_DRAWN), MAX_DRAWN) : 0;
}

function list(value, max) {
  return Array.isArray(value) ? value.slice(0, max) : [];
}

function fmt(n) {
  return Math.abs(n) >= 1000 ? n.toLocaleString() : String(Math.round(n * 100) / 100);
}

function percent(value, total) {
  return total ? Math.round((value / total) * 1000) / 10 : 0;
}

export function renderChart(data) {
  const type = TYPES.includes(data.chart_type) ? data.chart_type : 'bar';
  const labels = list(data.x_axis?.values, MAX_POINTS).map(text);
  const series = list(data.series, MAX_SERIES).map((s, idx) => ({
    name: text(s?.name ?? interpolate(_('Series %(n)s'), { n: idx + 1 })),
    data: list(s?.data, MAX_POINTS).map(num),
  }));
  const count = Math.max(labels.length, ...series.map((s) => s.data.length), 0);
  while (labels.length < count) labels.push(String(labels.length + 1));
  const title = text(data.title || '');
  const axes = { x: text(data.x_axis?.label || ''), y: text(data.y_axis?.label || '') };
  const kinds = { bar: _('bar chart'), line: _('line chart'), pie: _('pie chart') };
  const summary = series.length
    ? interpolate(_('%(title)s: %(kind)s of %(series)s'), { title: title || _('Chart'), kind: kinds[type], series: series.map((s) => s.name).join(', ') })
    : interpolate(_('%(title)s: %(kind)s'), { title: title || _('Chart'), kind: kinds[type] });
  const pie = type === 'pie' && series.length ? series[0].data.map((v) => Math.max(v, 0)) : [];
  const total = pie.reduce((a, b) => a + b, 0);
  const empty = !count || !series.length || (type === 'pie' && !total);

  const canvas = h('canvas', { role: 'img', 'aria-label': summary }, summary);
  const box = h('div', { class: `a2ui-chart-canvas a2ui-chart-${type}` },
    empty ? h('p', { class: 'a2ui-chart-empty' }, _('No data')) : canvas);
  const legendItems = type === 'pie' ? labels : series.map((s) => s.name);
  const legend = h('ul', { class: 'a2ui-chart-legend' }, legendItems.map((name, idx) =>
    h('li', {}, h('span', { class: `a2ui-swatch a2ui-series-${idx % 8}`, 'aria-hidden': 'true' }), name)));
  const head = [h('th', { scope: 'col' }, axes.x), series.map((s) => h('th', { scope: 'col' }, s.name))];
  if (type === 'pie') head.push(h('th', { scope: 'col' }, _('Share')));
  const table = h('table', { class: 'a2ui-visually-hidden' },
    h('caption', {}, title || _('Chart data')),
    h('thead', {}, h('tr', {}, head)),
    h('tbody', {}, labels.map((label, i) => h('tr', {}, h('th', { scope: 'row' }, label),
      series.map((s) => h('td', {}, fmt(s.data[i] ?? 0))),
      type === 'pie' ? h('td', {}, `${percent(pie[i] ?? 0, total)}%`) : null))));
  const figure = h('figure', { class: 'a2ui-chart', dataset: { chartState: empty ? 'empty' : 'loading' } },
    box, legend, table);
  if (!empty) draw(figure, canvas, { type, labels, series, pie, total, axes });
  return figure;
}

async function draw(figure, canvas, spec) {
  let Chart;
  try {
    Chart = await load();
  } catch {
    figure.dataset.chartState = 'unavailable';
    canvas.replaceWith(h('p', { class: 'a2ui-chart-empty' }, _('The chart could not be drawn; its data is in the table.')));
    return;
  }
  // Rendered components are attached right away; wait a few frames if this one is not yet.
  for (let i = 0; !figure.isConnected && i < 10; i += 1) await new Promise(requestAnimationFrame);
  if (!figure.isConnected) return; // replaced or removed before it was drawn
  // Charts of components that were removed or re-rendered since: Chart.js keeps every instance
  // (and its canvas) in a registry until destroyed.
  for (const old of Object.values(Chart.instances)) if (!old.canvas?.isConnected) old.destroy();
  const css = getComputedStyle(figure);
  const v = (name) => css.getPropertyValue(name).trim();
  const color = (i) => v(`--a2ui-s${i % 8}`);
  const muted = v('--a2ui-muted');
  Chart.defaults.font.family = css.fontFamily;
  Chart.defaults.font.size = 12;
  Chart.defaults.color = muted;
  const { type, labels, series, pie, total, axes } = spec;
  const datasets = type === 'pie'
    ? [{ label: series[0].name, data: pie, backgroundColor: labels.map((_, i) => color(i)),
      borderColor: v('--a2ui-panel'), borderWidth: 1.5 }]
    : series.map((s, i) => ({
      label: s.name, data: s.data, backgroundColor: color(i), borderColor: color(i),
      borderWidth: type === 'line' ? 2.5 : 0, pointRadius: 3.5, pointHoverRadius: 5,
    }));
  const tooltip = type === 'pie'
    ? (item) => `${item.label}: ${fmt(item.raw)} (${percent(item.raw, total)}%)`
    : (item) => `${item.dataset.label}: ${fmt(item.raw)}`;
  const axis = (label, grid) => ({
    title: { display: Boolean(label), text: label, font: { weight: '600' } },
    grid: grid ? { color: v('--a2ui-border') } : { display: false },
    ticks: { autoSkip: true, maxRotation: 45, color: muted },
    border: { color: v('--a2ui-border') },
  });
  const chart = new Chart(canvas, {
    type,
    data: { labels, datasets },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: matchMedia('(prefers-reduced-motion: reduce)').matches ? false : { duration: 250 },
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: tooltip } } },
      scales: type === 'pie' ? {} : { x: axis(axes.x, false), y: { ...axis(axes.y, true), beginAtZero: true } },
    },
  });
  figure.dataset.chartState = chart ? 'drawn' : 'unavailable';
}

// Charts as inline SVG built with createElementNS: bar (grouped), line and pie.
import { h, svg, text } from './dom.js';

const W = 560;
const H = 300;
const PAD = { top: 16, right: 16, bottom: 44, left: 52 };

function num(value) {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

function niceMax(max) {
  if (max <= 0) return 1;
  const exp = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * exp >= max) return step * exp;
  return 10 * exp;
}

function fmt(n) {
  return Math.abs(n) >= 1000 ? n.toLocaleString() : String(Math.round(n * 100) / 100);
}

export function renderChart(data) {
  const type = ['bar', 'line', 'pie'].includes(data.chart_type) ? data.chart_type : 'bar';
  const labels = (data.x_axis?.values || []).map(text);
  const series = (Array.isArray(data.series) ? data.series : []).map((s, idx) => ({
    name: text(s?.name ?? `Series ${idx + 1}`),
    data: (Array.isArray(s?.data) ? s.data : []).map(num),
  }));
  const count = Math.max(labels.length, ...series.map((s) => s.data.length), 0);
  while (labels.length < count) labels.push(String(labels.length + 1));
  const title = text(data.title || '');
  const summary = `${title || 'Chart'}: ${type} chart` +
    (series.length ? ` of ${series.map((s) => s.name).join(', ')}` : '');
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`, class: `a2ui-chart-svg a2ui-chart-${type}`, role: 'img', 'aria-label': summary,
    preserveAspectRatio: 'xMidYMid meet',
  }, svg('title', {}, summary));
  if (!count || !series.length) {
    root.append(svg('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'a2ui-chart-empty' }, 'No data'));
  } else if (type === 'pie') {
    drawPie(root, labels, series[0]);
  } else {
    drawAxes(root, data, labels, series, type);
  }
  const legendItems = type === 'pie' ? labels : series.map((s) => s.name);
  const legend = h('ul', { class: 'a2ui-chart-legend' }, legendItems.map((name, idx) =>
    h('li', {}, h('span', { class: `a2ui-swatch a2ui-series-${idx % 8}`, 'aria-hidden': 'true' }), name)));
  // A data table for screen readers and for copying numbers.
  const table = h('table', { class: 'a2ui-visually-hidden' },
    h('caption', {}, title || 'Chart data'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, text(data.x_axis?.label || '')),
      series.map((s) => h('th', { scope: 'col' }, s.name)))),
    h('tbody', {}, labels.map((label, i) => h('tr', {}, h('th', { scope: 'row' }, label),
      series.map((s) => h('td', {}, fmt(s.data[i] ?? 0)))))));
  return h('figure', { class: 'a2ui-chart' }, root, legend, table);
}

function drawAxes(root, data, labels, series, type) {
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const values = series.flatMap((s) => s.data);
  const min = Math.min(0, ...values);
  const max = niceMax(Math.max(...values, 0) - min) + min;
  const y = (v) => PAD.top + ih - ((v - min) / (max - min || 1)) * ih;
  const ticks = 5;
  for (let t = 0; t <= ticks; t += 1) {
    const v = min + ((max - min) * t) / ticks;
    root.append(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'a2ui-chart-grid' }));
    root.append(svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'a2ui-chart-tick' }, fmt(v)));
  }
  const band = iw / labels.length;
  labels.forEach((label, i) => {
    root.append(svg('text', {
      x: PAD.left + band * i + band / 2, y: H - PAD.bottom + 16, 'text-anchor': 'middle', class: 'a2ui-chart-tick',
    }, label.length > 12 ? `${label.slice(0, 11)}…` : label));
  });
  if (data.x_axis?.label) {
    root.append(svg('text', { x: PAD.left + iw / 2, y: H - 6, 'text-anchor': 'middle', class: 'a2ui-chart-axis-label' }, text(data.x_axis.label)));
  }
  if (data.y_axis?.label) {
    root.append(svg('text', {
      x: 12, y: PAD.top + ih / 2, 'text-anchor': 'middle', class: 'a2ui-chart-axis-label',
      transform: `rotate(-90 12 ${PAD.top + ih / 2})`,
    }, text(data.y_axis.label)));
  }
  if (type === 'bar') {
    const inner = band * 0.8;
    const bw = inner / series.length;
    series.forEach((s, si) => {
      s.data.forEach((v, i) => {
        const x = PAD.left + band * i + (band - inner) / 2 + bw * si;
        const top = y(Math.max(v, 0));
        const height = Math.abs(y(v) - y(0));
        root.append(svg('rect', {
          x, y: top, width: Math.max(bw - 2, 1), height: Math.max(height, 0.5), class: `a2ui-series-${si % 8}`,
        }, svg('title', {}, `${s.name}, ${labels[i]}: ${fmt(v)}`)));
      });
    });
  } else {
    series.forEach((s, si) => {
      const pts = s.data.map((v, i) => [PAD.left + band * i + band / 2, y(v)]);
      root.append(svg('polyline', {
        points: pts.map((p) => p.join(',')).join(' '), class: `a2ui-line a2ui-series-${si % 8}`, fill: 'none',
      }));
      pts.forEach((p, i) => root.append(svg('circle', { cx: p[0], cy: p[1], r: 3.5, class: `a2ui-series-${si % 8}` },
        svg('title', {}, `${s.name}, ${labels[i]}: ${fmt(s.data[i])}`))));
    });
  }
}

function drawPie(root, labels, series) {
  const values = series.data.map((v) => Math.max(v, 0));
  const total = values.reduce((a, b) => a + b, 0);
  const cx = W / 2;
  const cy = H / 2;
  const r = Math.min(W, H) / 2 - 16;
  if (!total) {
    root.append(svg('text', { x: cx, y: cy, 'text-anchor': 'middle', class: 'a2ui-chart-empty' }, 'No data'));
    return;
  }
  let angle = -Math.PI / 2;
  values.forEach((v, i) => {
    const label = `${labels[i]}: ${fmt(v)} (${Math.round((v / total) * 1000) / 10}%)`;
    if (v === total) {
      root.append(svg('circle', { cx, cy, r, class: `a2ui-series-${i % 8}` }, svg('title', {}, label)));
      return;
    }
    const next = angle + (v / total) * Math.PI * 2;
    const large = next - angle > Math.PI ? 1 : 0;
    const d = [
      `M ${cx} ${cy}`,
      `L ${cx + r * Math.cos(angle)} ${cy + r * Math.sin(angle)}`,
      `A ${r} ${r} 0 ${large} 1 ${cx + r * Math.cos(next)} ${cy + r * Math.sin(next)}`,
      'Z',
    ].join(' ');
    if (v > 0) root.append(svg('path', { d, class: `a2ui-slice a2ui-series-${i % 8}` }, svg('title', {}, label)));
    angle = next;
  });
}

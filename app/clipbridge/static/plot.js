// The transfer plot: f(x) under each semantics, as the service computed it (/v1/compare), with rings at
// the inputs where the outputs differ, and a table of those inputs (and of -inf, inf, nan for floats).
// Imported by translate.js only.

import { h, s } from './dom.js';
import { sameValue, shortNumber, toNumber } from './numbers.js';
import { readingLabel } from './readings.js';

const W = 720;
const H = 340;
const M = { left: 70, right: 16, top: 14, bottom: 40 };
const PALETTE = 8; // curve-0 .. curve-7 in inspector.css; more targets reuse them

/** A linear map that never overflows (float64 ranges span more than Number.MAX_VALUE). */
function scale(d0, d1, r0, r1) {
  const span = d1 / 2 - d0 / 2;
  return (v) => (span === 0 ? (r0 + r1) / 2 : r0 + ((v / 2 - d0 / 2) / span) * (r1 - r0));
}

function ticks(lo, hi) {
  const span = hi - lo;
  if (!Number.isFinite(span) || span <= 0) return lo === hi ? [lo] : [lo, 0, hi];
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

function extent(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) return [-1, 1];
  if (lo === hi) return [lo - 1, hi + 1];
  return [lo, hi];
}

function axes(sx, sy, xr, yr) {
  const g = s('g', { class: 'axes' });
  const [x0, x1] = [M.left, W - M.right];
  const [y0, y1] = [H - M.bottom, M.top];
  g.append(s('line', { x1: x0, y1: y0, x2: x1, y2: y0 }), s('line', { x1: x0, y1: y0, x2: x0, y2: y1 }));
  for (const t of ticks(...xr)) {
    const x = sx(t);
    g.append(s('line', { class: 'grid', x1: x, y1: y0, x2: x, y2: y1 }),
      s('text', { x, y: y0 + 16, 'text-anchor': 'middle', text: shortNumber(t) }));
  }
  for (const t of ticks(...yr)) {
    const y = sy(t);
    g.append(s('line', { class: 'grid', x1: x0, y1: y, x2: x1, y2: y }),
      s('text', { x: x0 - 6, y: y + 4, 'text-anchor': 'end', text: shortNumber(t) }));
  }
  g.append(s('text', { x: (x0 + x1) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis-label', text: 'x' }),
    s('text', { x: 12, y: (y0 + y1) / 2, 'text-anchor': 'middle', class: 'axis-label', text: 'f(x)' }));
  return g;
}

function polylines(xs, ys, sx, sy, k) {
  const lines = [];
  let pts = [];
  const flush = () => {
    if (pts.length) lines.push(s('polyline', { class: `curve curve-${k % PALETTE}`, points: pts.join(' ') }));
    pts = [];
  };
  xs.forEach((x, i) => {
    if (Number.isFinite(x) && Number.isFinite(ys[i])) pts.push(`${sx(x).toFixed(2)},${sy(ys[i]).toFixed(2)}`);
    else flush();
  });
  flush();
  return lines;
}

function valueTable(caption, rows, outputs, cls) {
  return h('table', { class: `values ${cls}` },
    h('caption', { text: caption }),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'x' }),
      outputs.map((o) => h('th', { scope: 'col', text: o.semantics, title: readingLabel(o.reading, o.shows) })))),
    h('tbody', {}, rows.map((i) => h('tr', {},
      h('th', { scope: 'row', text: i.x }),
      outputs.map((o) => {
        const v = o.output.data[i.index];
        return h('td', { class: sameValue(v, outputs[0].output.data[i.index]) ? null : 'differ', text: v });
      })))));
}

/**
 * Draw the plot. sample: {xs (wire values sent), special (how many at the end are -inf/inf/nan)};
 * outputs: CompareResponse.outputs, the source's semantics first.
 */
export function renderPlot(svg, legend, notes, sample, outputs) {
  const n = sample.xs.length - sample.special;
  const xs = sample.xs.slice(0, n).map(toNumber);
  const live = outputs.map((o, k) => ({ o, k })).filter(({ o }) => o.output);
  const ys = live.map(({ o }) => o.output.data.map(toNumber));
  const rows = sample.xs.map((x, index) => {
    const vals = live.map(({ o }) => o.output.data[index]);
    return { index, x, differs: vals.some((v) => !sameValue(v, vals[0])) };
  });
  const diffIdx = rows.slice(0, n).filter((r) => r.differs).map((r) => r.index);

  const sx = scale(...extent(xs.filter(Number.isFinite)), M.left, W - M.right);
  const yr = extent(ys.flatMap((col) => col.slice(0, n)).filter(Number.isFinite));
  const sy = scale(...yr, H - M.bottom, M.top);
  const xr = extent(xs.filter(Number.isFinite));

  const parts = [s('title', { id: 'plot-title', text: 'Transfer plot' }), s('desc', { id: 'plot-desc' })];
  parts.push(axes(sx, sy, xr, yr));
  live.forEach(({ k }, j) => parts.push(...polylines(xs, ys[j], sx, sy, k)));
  const marks = s('g', { class: 'diffs' });
  for (const i of diffIdx) {
    marks.append(s('line', { class: 'diff-tick', x1: sx(xs[i]), x2: sx(xs[i]), y1: H - M.bottom, y2: H - M.bottom + 6 }));
    live.forEach(({ k }, j) => {
      if (Number.isFinite(ys[j][i])) marks.append(s('circle', { class: `diff curve-${k % PALETTE}`, cx: sx(xs[i]), cy: sy(ys[j][i]), r: 4 }));
    });
  }
  parts.push(marks);
  svg.replaceChildren(...parts);
  const summary = `${live.map(({ o }) => o.semantics).join(', ')} on ${n} inputs from ${shortNumber(xr[0])} to ` +
    `${shortNumber(xr[1])}: ${diffIdx.length ? `${diffIdx.length} differ` : 'no differences'}`;
  svg.querySelector('desc').textContent = summary;

  legend.replaceChildren(...outputs.map((o, k) => h('li', {},
    h('span', { class: `swatch curve-${k % PALETTE}`, 'aria-hidden': 'true' }),
    h('strong', { text: k ? o.semantics : `${o.semantics} (source)` }),
    h('span', { class: 'reading', text: ` [${readingLabel(o.reading, o.shows)}]` }), ': ',
    o.error ? `cannot compute (${o.error})` : o.meaning)));

  const items = [h('p', { class: 'plot-summary', text: `${diffIdx.length} of ${n} sample inputs differ.` })];
  if (diffIdx.length) {
    const shown = diffIdx.length > 12 ? [...diffIdx.slice(0, 6), ...diffIdx.slice(-6)] : diffIdx;
    const caption = diffIdx.length > 12 ? 'Inputs where the outputs differ (the 6 lowest and 6 highest)' : 'Inputs where the outputs differ';
    items.push(valueTable(caption, shown.map((i) => rows[i]), live.map(({ o }) => o), 'diff-table'));
  }
  if (sample.special) items.push(valueTable('Special inputs', rows.slice(n), live.map(({ o }) => o), 'special-table'));
  notes.replaceChildren(...items);
}

export function clearPlot(svg, legend, notes, message) {
  svg.replaceChildren(s('title', { id: 'plot-title', text: 'Transfer plot' }), s('desc', { id: 'plot-desc', text: message }),
    s('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'axis-label', text: message }));
  legend.replaceChildren();
  notes.replaceChildren();
}

// The diff as a graph: the nodes from the inputs to the outputs through every differing node (the API's
// `graph`, app/clipbridge/diff/graph_view.py), laid out by dagre (app/clipbridge/static/dagre.js, vendored, docs/inspector.md).
// The first divergence and introduced nodes are marked, inherited ones shaded; a click (or Enter) on a node
// shows its cause and witness in the panel beside the drawing.
// Imported by diff.js only.

import dagre from './dagre.js';
import { h, s } from './dom.js';

const CHAR = 7.2; // px per character of the 12px monospace node labels
const NODE_H = 42;
const IO_H = 28;

const width = (...texts) => Math.max(86, Math.min(260, 20 + CHAR * Math.max(...texts.map((t) => t.length))));
const short = (t, n = 34) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);

/** dagre's graph: input and output tensors, drawn nodes, and a stub for each tensor made outside the subset. */
function build(graph, rows) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 22, ranksep: 34, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const producer = new Map();
  for (const t of graph.inputs) {
    g.setNode(`in:${t}`, { kind: 'io', label: short(t), title: `graph input ${t}`, width: width(short(t)), height: IO_H });
    producer.set(t, `in:${t}`);
  }
  for (const n of graph.nodes) {
    const row = rows.get(n.name);
    g.setNode(`n:${n.name}`, { kind: 'op', node: n, row, label: short(n.name), op: n.op,
      width: width(short(n.name), n.op), height: NODE_H });
    for (const o of n.outputs) producer.set(o, `n:${n.name}`);
  }
  for (const n of graph.nodes) {
    for (const t of n.inputs) {
      if (!producer.has(t)) {
        producer.set(t, `stub:${t}`);
        g.setNode(`stub:${t}`, { kind: 'stub', label: `… ${short(t, 24)}`, title: `${t}, made by nodes not drawn`,
          width: width(`… ${short(t, 24)}`), height: IO_H });
      }
      g.setEdge(producer.get(t), `n:${n.name}`);
    }
  }
  for (const t of graph.outputs) {
    g.setNode(`out:${t}`, { kind: 'io', label: short(t), title: `graph output ${t}`, width: width(short(t)), height: IO_H });
    if (producer.has(t)) g.setEdge(producer.get(t), `out:${t}`);
  }
  // A neighbourhood is cut below too: a tensor that no drawn node reads and that is no graph output goes on to
  // nodes not drawn.
  if (graph.scope !== 'paths') {
    const read = new Set([...graph.nodes.flatMap((n) => n.inputs), ...graph.outputs]);
    for (const n of graph.nodes) {
      for (const t of n.outputs.filter((o) => !read.has(o))) {
        g.setNode(`more:${t}`, { kind: 'stub', label: `${short(t, 24)} …`, title: `${t}, read by nodes not drawn`,
          width: width(`${short(t, 24)} …`), height: IO_H });
        g.setEdge(`n:${n.name}`, `more:${t}`);
      }
    }
  }
  dagre.layout(g);
  return g;
}

function nodeClass(v, first) {
  if (v.kind !== 'op') return `gnode gnode-${v.kind}`;
  const origin = v.row ? v.row.origin || 'unreplayed' : 'same';
  return `gnode gnode-op origin-${origin}${v.node.name === first ? ' first' : ''}`;
}

function drawNode(id, v, first, select) {
  const x = v.x - v.width / 2;
  const y = v.y - v.height / 2;
  const parts = [s('rect', { x, y, width: v.width, height: v.height, rx: v.kind === 'op' ? 6 : 13 })];
  if (v.kind === 'op') {
    parts.push(s('text', { x: v.x, y: v.y - 4, 'text-anchor': 'middle', class: 'gop', text: v.op }),
      s('text', { x: v.x, y: v.y + 12, 'text-anchor': 'middle', class: 'gname', text: v.label }));
    if (v.node.name === first) {
      parts.push(s('rect', { x: x + v.width - 30, y: y - 9, width: 36, height: 17, rx: 8, class: 'gfirst-tag' }),
        s('text', { x: x + v.width - 12, y: y + 3, 'text-anchor': 'middle', class: 'gfirst-text', text: '1st' }));
    }
  } else {
    parts.push(s('text', { x: v.x, y: v.y + 4, 'text-anchor': 'middle', class: 'gname', text: v.label }));
  }
  const label = v.kind === 'op'
    ? `${v.node.name} (${v.op})${v.row ? `: ${v.row.origin || 'not replayed'}, ${v.row.cause || 'unexplained'}` : ': outputs agree'}`
    : v.title;
  const g = s('g', { class: nodeClass(v, first), 'data-node': v.kind === 'op' ? v.node.name : null,
    tabindex: v.kind === 'op' ? 0 : null, role: v.kind === 'op' ? 'button' : null, 'aria-label': label },
  s('title', { text: label }), ...parts);
  if (v.kind === 'op') {
    g.addEventListener('click', () => select(v.node.name));
    g.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        select(v.node.name);
      }
    });
  }
  return g;
}

function drawEdge(points, arrow) {
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
  return s('path', { d, class: 'gedge', 'marker-end': `url(#${arrow})` });
}

/** 'neighbourhood-3' -> 'the nodes within 3 steps'; 'differing' -> 'the differing nodes alone'. */
function near(scope) {
  const m = scope.match(/^neighbourhood-(\d+)$/);
  if (m) return `the nodes within ${m[1]} step${m[1] === '1' ? '' : 's'}`;
  return scope === 'differing' ? 'the differing nodes alone' : scope;
}

function legend(graph) {
  const items = [['first', 'first divergence'], ['introduced', 'introduced here'], ['inherited', 'inherited (shaded)'],
    ['same', 'outputs agree']];
  const scope = graph.scope === 'paths'
    ? `${graph.nodes.length} of ${graph.total_nodes} nodes: every path from the inputs to the outputs through a differing node.`
    : `${graph.nodes.length} of ${graph.total_nodes} nodes: the model is large, so only the neighbourhood of the differing nodes `
      + `is drawn (${near(graph.scope)})${graph.truncated ? ', cut at the drawing bound' : ''}; dashed stubs lead on.`;
  return h('div', { class: 'graph-legend' },
    h('ul', {}, items.map(([k, t]) => h('li', {}, h('span', { class: `key key-${k}`, 'aria-hidden': 'true' }), t))),
    h('p', { class: 'hint', text: scope }));
}

/**
 * The graph block: the drawing, its legend, and the detail panel that detail(name) fills. first: the first
 * divergence's node name; rows: Map node name -> DiffNode; detail(name) -> the panel's content. id: the prefix of
 * the block's element ids (`${id}-detail`, `${id}-arrow`), so that two graphs on one page (the diff and its edge
 * probe) keep their ids unique; title: the block's heading; label: the drawing's accessible name.
 */
export function diffGraph(graph, rows, first, detail,
  { id = 'graph', title = 'Graph of the difference', label = 'Graph of the differing nodes' } = {}) {
  const g = build(graph, rows);
  const { width: W, height: H } = g.graph();
  const arrow = `${id}-arrow`;
  const panel = h('div', { id: `${id}-detail`, class: 'graph-detail', 'aria-live': 'polite' });
  const svg = s('svg', { class: 'graph', viewBox: `0 0 ${Math.ceil(W)} ${Math.ceil(H)}`, width: Math.ceil(W),
    height: Math.ceil(H), role: 'group', 'aria-label': label });
  const select = (name) => {
    for (const el of svg.querySelectorAll('.gnode-op')) el.classList.toggle('selected', el.dataset.node === name);
    panel.replaceChildren(...detail(name));
  };
  svg.append(s('defs', {}, s('marker', { id: arrow, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'garrow' }))));
  svg.append(...g.edges().map((e) => drawEdge(g.edge(e).points, arrow)));
  svg.append(...g.nodes().map((id) => drawNode(id, g.node(id), first, select)));
  const box = h('div', { class: 'graph-box' }, svg);
  // Wider than about twice the box, a scaled-down drawing is unreadable: it keeps its size and scrolls in the box.
  requestAnimationFrame(() => box.classList.toggle('wide', W > 2 * box.clientWidth));
  const start = first || (graph.nodes.find((n) => rows.has(n.name)) || {}).name;
  if (start) select(start);
  const wrap = h('div', { class: 'graph-wrap' }, h('h3', { text: title }),
    h('div', { class: 'graph-grid' }, h('div', {}, box, legend(graph)), panel));
  wrap.showNode = (name) => { // the table's node buttons: the same detail, and the drawing brought into view
    select(name);
    const el = [...svg.querySelectorAll('.gnode-op')].find((n) => n.dataset.node === name);
    (el || wrap).scrollIntoView({ block: 'nearest', inline: 'nearest' });
    if (el) el.focus({ preventScroll: true });
  };
  return wrap;
}

// The diff drop zone: an .onnx model (and optionally an .npz of its inputs) goes to /v1/models/diff; the
// verdict, the engines as they ran, the first divergence, a graph of the differing nodes (graph.js) and every
// differing clip-like node with its cause and witness come back (docs/diff.md, docs/inspector.md).

import { ApiError, api, showProblem } from './api.js';
import { byId, fill, h, wireDropZone } from './dom.js';
import { diffGraph } from './graph.js';
import { observedLabel, readingLabel } from './readings.js';

const DIFF_INSTALL = 'pip install -e ".[diff]"';

function wire(v) {
  return v !== null && typeof v === 'object' ? Object.entries(v).map(([e, x]) => `${e} ${x}`).join(', ') : String(v);
}

/** 'at [0, 0]: input nan → onnxruntime nan, openvino 0' */
export function witnessText(w) {
  if (!w) return '';
  // No input element (the node's input has another shape, an If's branch): the outputs alone.
  const input = w.input === null ? 'outputs' : `input ${wire(w.input)} →`;
  return `at [${w.index.join(', ')}]: ${input} ${wire(w.outputs)}`;
}

/** A cause as a readable badge: explained causes dark, an unexplained node or one that is no clip in red. */
function causeBadge(n) {
  const cause = n.cause || 'unexplained';
  const bad = cause === 'unexplained' || cause === 'not-a-clip';
  return h('span', { class: `badge badge-cause${bad ? ' badge-bad' : ''}`, text: cause });
}

/** One differing node in words: for the graph's detail panel. */
function nodeDetail(n, graphNode, engines) {
  if (!n) {
    const op = graphNode ? ` (${graphNode.op})` : '';
    return [h('h4', {}, h('code', { text: graphNode ? graphNode.name : '?' }), op),
      h('p', { class: 'none', text: 'The engines agree on this node\'s outputs: it is drawn because it lies on a path '
        + 'from the inputs to the outputs through a differing node.' })];
  }
  const dl = [['Origin', n.origin || 'not replayed'], ['Differing', `${n.differing} of ${n.total} elements`]];
  if (n.inherited_from && n.inherited_from.length) dl.push(['Inherited from', n.inherited_from.join(', ')]);
  if (n.pattern) dl.push(['Pattern', n.pattern]);
  if (n.detail) dl.push(['Detail', n.detail]);
  return [
    h('h4', {}, h('code', { text: n.node }), ` (${n.op})`),
    h('p', { class: 'detail-cause' }, 'Cause: ', causeBadge(n)),
    h('dl', { class: 'behaviours' }, dl.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })])),
    n.witness ? h('p', { class: 'detail-witness' }, h('strong', { text: 'Witness ' }),
      h('span', { class: 'reading', text: `(${readingText(n.witness, engines)})` }), ': ',
      h('code', { text: witnessText(n.witness) })) : h('p', { class: 'none', text: 'No witness.' }),
  ];
}

/** A diff's witness is what the engines computed; a `reading` the API adds (issue 37) is shown when present. */
function readingText(w, engines) {
  return w && w.reading ? readingLabel(w.reading) : observedLabel(engines);
}

function table(res, engines, graphEl) {
  const cols = ['Node', 'Op', 'Differing', 'Origin', 'Cause', `Witness (${observedLabel(engines)})`];
  const head = h('tr', {}, cols.map((c) => h('th', { scope: 'col', text: c })));
  const cell = (label, props, ...kids) => h('td', { 'data-label': label, ...props }, ...kids);
  const rows = res.nodes.map((n) => h('tr', { class: `diff-row diff-${n.origin || 'unknown'}`, 'data-node': n.node },
    cell('Node', {}, graphEl && graphEl.showNode ? h('button', { type: 'button', class: 'node-link',
      'aria-label': `Show ${n.node} in the graph`, onclick: () => graphEl.showNode(n.node) }, h('code', { text: n.node }))
      : h('code', { text: n.node })), cell('Op', { text: n.op }),
    cell('Differing', { text: `${n.differing}/${n.total}` }), cell('Origin', { text: n.origin || 'not replayed' }),
    cell('Cause', {}, causeBadge(n)),
    cell('Witness', { class: 'notes-cell' }, witnessText(n.witness),
      n.witness && n.witness.reading ? h('small', { class: 'reading', text: ` (${readingLabel(n.witness.reading)})` }) : null)));
  return h('table', { class: 'diff-table cards' }, h('thead', {}, head), h('tbody', {}, rows));
}

function report(res) {
  const engines = res.engines.map((e) => `${e.name} ${e.version.split('-')[0]}`);
  const ran = res.engines.map((e) => `${e.name} ${e.version.split('-')[0]} (${e.precision})`
    + (e.observer_effect.length ? ` — marking changed ${e.observer_effect.join(', ')}` : ''));
  const seed = res.inputs.seed === null ? '' : `, seed ${res.inputs.seed}`;
  const fd = res.first_divergence;
  const rows = new Map(res.nodes.map((n) => [n.node, n]));
  const graphNodes = new Map(res.graph ? res.graph.nodes.map((n) => [n.name, n]) : []);
  const graphEl = res.graph ? diffGraph(res.graph, rows, fd ? fd.node : null,
    (name) => nodeDetail(rows.get(name), graphNodes.get(name), engines)) : null;
  return [
    h('p', { class: 'diff-verdict' }, 'Verdict: ', h('strong', { text: res.verdict })),
    h('p', { class: 'reading-note' }, h('strong', { text: 'Reading: ' }),
      `${observedLabel(engines)} — the outputs the engines computed on this model, not a specification.`),
    h('p', { text: `Engines: ${ran.join(' · ')}. Inputs: ${res.inputs.source}${seed}; method ${res.method}.` }),
    h('p', { text: res.outputs.map((o) => `${o.name}: ${o.differing}/${o.total} differ`).join(' · ') }),
    h('p', { class: 'diff-first', text: fd ? `First divergence: ${fd.node} (${fd.op})` : 'No divergence.' }),
    graphEl,
    res.nodes.length ? table(res, engines, graphEl) : null,
  ];
}

/** Diff needs the engines: a problem that says one is missing gets the install command, not a model error. */
function engineMissing(exc) {
  if (!(exc instanceof ApiError)) return null;
  const text = [exc.message, ...exc.errors.map((e) => e.msg)].join(' ');
  const named = text.match(/pip install[^()]*?\]"?/);
  const missing = /No module named|not installed|Backend unavailable|engine.*missing|pip install/i.test(
    `${exc.problem.title || ''} ${text}`);
  return missing ? (named ? named[0] : DIFF_INSTALL) : null;
}

function installHint(command) {
  return h('p', { class: 'install-hint', role: 'note' }, h('strong', { text: 'Diff needs the engines. ' }),
    'It runs the model on onnxruntime and OpenVINO, which the core install leaves out. Install them with ',
    h('code', { text: command }), ' (the [diff] extra) and restart the server.');
}

/** Wires the diff drop zone of the model view; returns upload(files) for "Try the example model". status(text)
 * sets the model view's header line. */
export function initDiff({ status = () => {} } = {}) {
  const zone = byId('diff-dropzone');
  if (!zone) return { upload: async () => {} };
  const input = byId('diff-file');
  const out = byId('diff-out');
  const errors = byId('diff-errors');

  async function upload(files) {
    const list = [...files];
    const model = list.find((f) => /\.onnx$/i.test(f.name));
    const inputs = list.find((f) => /\.npz$/i.test(f.name));
    errors.replaceChildren();
    if (!model) {
      errors.textContent = 'Choose an .onnx model (and optionally an .npz of its inputs).';
      return;
    }
    zone.dispatchEvent(new CustomEvent('diff-files', { detail: list })); // fix.js keeps them for "Fix for"
    const form = new FormData();
    form.append('model', model, model.name);
    if (inputs) form.append('inputs', inputs, inputs.name);
    const query = new URLSearchParams([['precision', byId('diff-precision').value]]);
    out.replaceChildren(h('p', { text: `Running ${model.name} on the engines…` }));
    status(`Diffing ${model.name}…`);
    try {
      const res = await api('/v1/models/diff', { body: form, query });
      fill(out, h('p', { class: 'scan-file', text: model.name }), ...report(res));
      status(`Diff of ${model.name}: ${res.verdict}${res.first_divergence ? `, first divergence at ${res.first_divergence.node}` : ''}`);
    } catch (exc) {
      out.replaceChildren();
      const command = engineMissing(exc);
      if (command) fill(errors, installHint(command));
      else showProblem(errors, exc);
      status(`Diff of ${model.name} failed`);
    }
  }

  wireDropZone(zone, input, upload);
  return { upload };
}

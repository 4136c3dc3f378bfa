// The diff drop zone: an .onnx model (and optionally an .npz of its inputs) goes to /v1/models/diff; the
// verdict about the outputs, the engines as they ran, the first divergence, a graph of the differing nodes
// (graph.js) and every differing clip-like node with its cause and witness come back, then the differences
// masked inside the model and the edge probe's own pass, each in its own block (docs/diff.md, docs/inspector.md).
// Imported by modelview.js (the drop zone) and chain.js (witnessText) only.

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

/** A cause as a readable badge: explained causes dark, an unexplained node or one that is no clip in red, except
 * where the difference is masked (it reaches no output, so it is no failure: `quiet`). */
function causeBadge(n, quiet = false) {
  const cause = n.cause || 'unexplained';
  const bad = !quiet && (cause === 'unexplained' || cause === 'not-a-clip');
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

function table(nodes, engines, graphEl, extra = '') {
  const quiet = extra.includes('masked');
  const cols = ['Node', 'Op', 'Differing', 'Origin', 'Cause', `Witness (${observedLabel(engines)})`];
  const head = h('tr', {}, cols.map((c) => h('th', { scope: 'col', text: c })));
  const cell = (label, props, ...kids) => h('td', { 'data-label': label, ...props }, ...kids);
  const rows = nodes.map((n) => h('tr', { class: `diff-row diff-${n.origin || 'unknown'}`, 'data-node': n.node },
    cell('Node', {}, graphEl && graphEl.showNode ? h('button', { type: 'button', class: 'node-link',
      'aria-label': `Show ${n.node} in the graph`, onclick: () => graphEl.showNode(n.node) }, h('code', { text: n.node }))
      : h('code', { text: n.node })), cell('Op', { text: n.op }),
    cell('Differing', { text: `${n.differing}/${n.total}` }), cell('Origin', { text: n.origin || 'not replayed' }),
    cell('Cause', {}, causeBadge(n, quiet)),
    cell('Witness', { class: 'notes-cell' }, witnessText(n.witness),
      n.witness && n.witness.reading ? h('small', { class: 'reading', text: ` (${readingLabel(n.witness.reading)})` }) : null)));
  return h('table', { class: `diff-table cards${extra}` }, h('thead', {}, head), h('tbody', {}, rows));
}

/** 'generated ordinary sample, seed 20240' or 'given'; the edge pass adds the tensors it generated. */
function inputsText(inputs, tensors = false) {
  const sample = inputs.sample ? ` ${inputs.sample} sample` : '';
  const seed = inputs.seed === null ? '' : `, seed ${inputs.seed}`;
  const list = tensors && inputs.tensors && inputs.tensors.length
    ? `: ${inputs.tensors.map((t) => `${t.name} ${t.dtype} ${t.shape.length ? `[${t.shape.join(', ')}]` : 'scalar'}`)
      .join(', ')}` : '';
  return `${inputs.source}${sample}${seed}${list}`;
}

const outputsText = (outputs) => outputs.map((o) => `${o.name}: ${o.differing}/${o.total} differ`).join(' · ');

/** One pass's differing nodes: its graph (ids under `id`, so two graphs keep unique ids) and its node table. */
function pass(section, engines, { id, title, label }) {
  const fd = section.first_divergence;
  const rows = new Map(section.nodes.map((n) => [n.node, n]));
  const graphNodes = new Map(section.graph ? section.graph.nodes.map((n) => [n.name, n]) : []);
  const graphEl = section.graph ? diffGraph(section.graph, rows, fd ? fd.node : null,
    (name) => nodeDetail(rows.get(name), graphNodes.get(name), engines), { id, title, label }) : null;
  return [graphEl, section.nodes.length ? table(section.nodes, engines, graphEl) : null];
}

/** Differences inside the model that reach no output (issue 44): reported with their causes, never red. */
function masked(m, engines, heading = 'h3') {
  if (!m || !m.nodes.length) return null;
  return h('div', { class: 'diff-masked', role: 'note' },
    h(heading, { text: 'Masked inside the model' }),
    h('p', { class: 'masked-summary', text: m.summary || `${m.nodes.length} node(s) differ inside the model.` }),
    h('p', { class: 'hint', text: 'These nodes differ, but no output does: the difference is masked before it '
      + 'reaches one (a later Where, Max or clip discards it). Not a failure unless fail_on names masked.' }),
    table(m.nodes, engines, null, ' masked-table'));
}

/** The edge probe's own pass: NaN, ±inf, float16's 65504 and each clip's bounds (docs/diff.md, Edge probe). */
function edgeSection(e, engines) {
  const parts = [h('h3', { text: 'Edge probe' }),
    h('p', { class: 'hint', text: 'A second pass on hostile values: NaN, ±inf, float16\'s 65504 and each clip\'s '
      + 'bounds. How the engines treat them is reported here; it counts for the verdict above only with '
      + 'fail_on=edge.' }),
    h('p', { class: 'edge-verdict' }, 'Edge verdict: ', h('strong', { text: e.verdict }))];
  const section = (...kids) => h('section', { class: 'diff-edge', 'aria-label': 'Edge probe' }, ...parts, ...kids);
  if (e.verdict === 'error') { // the probe's own error: the verdict above stands
    const message = e.error && e.error.message ? e.error.message : 'no message';
    return section(h('p', { class: 'edge-error', role: 'note', text: `The edge probe could not run: ${message}` }));
  }
  const fd = e.first_divergence;
  const method = e.method ? `; method ${e.method}` : '';
  return section(
    e.inputs ? h('p', { class: 'edge-inputs', text: `Inputs: ${inputsText(e.inputs, true)}${method}.` }) : null,
    h('p', { class: 'edge-outputs', text: outputsText(e.outputs) }),
    h('p', { class: 'edge-first', text: fd ? `First divergence: ${fd.node} (${fd.op})` : 'No divergence.' }),
    ...pass(e, engines, { id: 'edge-graph', title: 'Graph of the edge probe\'s difference',
      label: 'Graph of the nodes that differ on the edge probe' }),
    masked(e.masked, engines, 'h4'));
}

function report(res) {
  const engines = res.engines.map((e) => `${e.name} ${e.version.split('-')[0]}`);
  const ran = res.engines.map((e) => `${e.name} ${e.version.split('-')[0]} (${e.precision})`
    + (e.observer_effect.length ? ` — marking changed ${e.observer_effect.join(', ')}` : ''));
  const fd = res.first_divergence;
  return [
    h('p', { class: 'diff-verdict' }, 'Verdict: ', h('strong', { text: res.verdict }),
      h('span', { class: 'hint', text: ' (about the outputs)' })),
    h('p', { class: 'reading-note' }, h('strong', { text: 'Reading: ' }),
      `${observedLabel(engines)} — the outputs the engines computed on this model, not a specification.`),
    h('p', { text: `Engines: ${ran.join(' · ')}. Inputs: ${inputsText(res.inputs)}; method ${res.method}.` }),
    h('p', { class: 'diff-outputs', text: outputsText(res.outputs) }),
    h('p', { class: 'diff-first', text: fd ? `First divergence: ${fd.node} (${fd.op})` : 'No divergence.' }),
    ...pass(res, engines, { id: 'graph', title: 'Graph of the difference', label: 'Graph of the differing nodes' }),
    masked(res.masked, engines),
    res.edge ? edgeSection(res.edge, engines) : null,
  ];
}

/** The header line: the verdict, and the edge probe's beside it. */
export function statusText(name, res) {
  const at = (fd) => (fd ? `, first divergence at ${fd.node}` : '');
  const e = res.edge;
  const edge = e ? ` (edge probe: ${e.verdict}${at(e.first_divergence)})` : '';
  return `Diff of ${name}: ${res.verdict}${at(res.first_divergence)}${edge}`;
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
      zone.dispatchEvent(new CustomEvent('diff-result', { detail: res })); // fix.js: whether there is a fix to offer
      fill(out, h('p', { class: 'scan-file', text: model.name }), ...report(res));
      status(statusText(model.name, res));
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

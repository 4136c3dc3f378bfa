// The diff drop zone: an .onnx model (and optionally an .npz of its inputs) goes to /v1/models/diff; the
// verdict, the engines as they ran, the first divergence and every differing clip-like node with its witness
// come back (docs/diff.md).

import { api, showProblem } from './api.js';
import { byId, h, wireDropZone } from './dom.js';

function witnessText(w) {
  if (!w) return '';
  const input = w.input !== null && typeof w.input === 'object'
    ? Object.entries(w.input).map(([e, v]) => `${e} ${v}`).join(', ') : String(w.input);
  const outs = Object.entries(w.outputs).map(([e, v]) => `${e} ${v}`).join(', ');
  return `at [${w.index.join(', ')}]: input ${input} → ${outs}`;
}

function report(res) {
  const engines = res.engines.map((e) => `${e.name} ${e.version.split('-')[0]} (${e.precision})`
    + (e.observer_effect.length ? ` — marking changed ${e.observer_effect.join(', ')}` : ''));
  const seed = res.inputs.seed === null ? '' : `, seed ${res.inputs.seed}`;
  const fd = res.first_divergence;
  const head = h('tr', {}, ['Node', 'Op', 'Differing', 'Origin', 'Cause', 'Witness'].map(
    (c) => h('th', { scope: 'col', text: c })));
  const rows = res.nodes.map((n) => h('tr', { class: `diff-row diff-${n.origin || 'unknown'}` },
    h('td', {}, h('code', { text: n.node })), h('td', { text: n.op }), h('td', { text: `${n.differing}/${n.total}` }),
    h('td', { text: n.origin || 'not replayed' }),
    h('td', {}, h('span', { class: 'badge', text: n.cause || 'unexplained' })),
    h('td', { class: 'notes-cell', text: witnessText(n.witness) })));
  return [
    h('p', { class: 'diff-verdict' }, 'Verdict: ', h('strong', { text: res.verdict })),
    h('p', { text: `Engines: ${engines.join(' · ')}. Inputs: ${res.inputs.source}${seed}; method ${res.method}.` }),
    h('p', { text: res.outputs.map((o) => `${o.name}: ${o.differing}/${o.total} differ`).join(' · ') }),
    h('p', { class: 'diff-first', text: fd ? `First divergence: ${fd.node} (${fd.op})` : 'No divergence.' }),
    res.nodes.length ? h('table', { class: 'diff-table' }, h('thead', {}, head), h('tbody', {}, rows)) : null,
  ];
}

/** Wires the diff drop zone of the model view (main.js calls it once, before initFix). */
export function initDiff() {
  const zone = byId('diff-dropzone');
  if (!zone) return;
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
    const form = new FormData();
    form.append('model', model, model.name);
    if (inputs) form.append('inputs', inputs, inputs.name);
    const query = new URLSearchParams([['precision', byId('diff-precision').value]]);
    out.replaceChildren(h('p', { text: `Running ${model.name} on the engines…` }));
    try {
      out.replaceChildren(...report(await api('/v1/models/diff', { body: form, query })));
    } catch (exc) {
      out.replaceChildren();
      showProblem(errors, exc);
    }
  }

  wireDropZone(zone, input, upload);
}

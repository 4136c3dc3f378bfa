// "Fix for B" after a diff: the files dropped on the diff zone go to /v1/models/fix (reference onnxruntime,
// target openvino: the diff zone's engines), the written model is downloaded, and the fix's proof is shown:
// its verdict, each rule applied to a node and why, the engine setting no rewrite replaces, and the cost.
// A module of its own beside diff.js: it only listens to the diff zone and watches #diff-out.
// Imported by modelview.js only.

import { api, showProblem } from './api.js';
import { byId, download, fill, fromBase64, h } from './dom.js';
import { observedLabel } from './readings.js';

const REFERENCE = 'onnxruntime';
const TARGET = 'openvino';
let files = [];
let result = null; // the diff's body on screen (diff.js's diff-result event)

/** Whether the diff found a clip difference a fix can rewrite: in the verdict's nodes, the masked ones or the edge
 * probe's (the fix route runs the edge values itself, so a model equal on ordinary inputs can still need one). */
export function fixable(res) {
  if (!res) return false;
  const e = res.edge || {};
  const nodes = [res.nodes, res.masked && res.masked.nodes, e.nodes, e.masked && e.masked.nodes];
  return nodes.some((list) => (list || []).some((n) => n.cause !== 'not-a-clip'));
}

function report(res) {
  const c = res.cost;
  const cost = c.original_ms === null ? `Cost on ${c.engine}: written ${c.written_ms} ms (${c.note}).`
    : `Cost on ${c.engine}: ${c.written_ms} ms against ${c.original_ms} ms for the original (×${c.ratio}, `
      + `median of ${c.rounds}); clean outputs bit-identical: ${c.clean_identical ? 'yes' : 'no'}.`;
  const cell = (label, props, ...kids) => h('td', { 'data-label': label, ...props }, ...kids);
  const rows = res.rules_applied.map((r) => h('tr', {}, cell('Node', {}, h('code', { text: r.node })),
    cell('Op', { text: r.op }), cell('Rule', {}, h('span', { class: 'badge badge-rule', text: r.rule })),
    cell('Why', { text: r.why })));
  const head = h('tr', {}, ['Node', 'Op', 'Rule', 'Why'].map((t) => h('th', { scope: 'col', text: t })));
  const p = res.proof;
  return [
    h('p', { class: 'fix-verdict' }, `Proof (${res.target} running the written model against ${res.reference} `
      + 'running the original): ', h('strong', { text: p.verdict })),
    h('p', { class: 'reading-note' }, h('strong', { text: 'Reading: ' }),
      `${observedLabel([res.reference, res.target])} — measured, not a specification.`),
    h('p', { text: p.outputs.map((o) => `${o.name}: ${o.differing}/${o.total} differ`).join(' · ') }),
    p.first_divergence ? h('p', { text: `Still differs first at ${p.first_divergence.node} `
      + `(${p.first_divergence.op}).` }) : null,
    ...res.advice.map((a) => h('p', { class: 'fix-advice', role: 'note' }, h('strong', { text: 'Setting needed: ' }),
      `${Object.entries(a.setting).map(([k, v]) => `${k}=${v}`).join(', ')} — ${a.message}`)),
    rows.length ? h('table', { class: 'diff-table fix-rules cards' }, h('thead', {}, head), h('tbody', {}, rows))
      : h('p', { text: 'No rule was needed.' }),
    h('p', { text: cost }),
  ].filter(Boolean);
}

async function runFix(out, errors) {
  const model = files.find((f) => /\.onnx$/i.test(f.name));
  const inputs = files.find((f) => /\.npz$/i.test(f.name));
  const form = new FormData();
  form.append('model', model, model.name);
  if (inputs) form.append('inputs', inputs, inputs.name);
  const precision = byId('diff-precision') ? byId('diff-precision').value : 'model';
  const query = new URLSearchParams([['reference', REFERENCE], ['target', TARGET], ['precision', precision]]);
  errors.replaceChildren();
  out.replaceChildren(h('p', { text: `Writing ${model.name} for ${TARGET} and proving it…` }));
  try {
    const res = await api('/v1/models/fix', { body: form, query });
    download(model.name.replace(/\.onnx$/i, '') + `.fixed-for-${TARGET}.onnx`, fromBase64(res.model.onnx_base64),
      'application/octet-stream');
    fill(out, ...report(res));
  } catch (exc) {
    out.replaceChildren();
    showProblem(errors, exc);
  }
}

/** Adds the Fix bar after the diff's result (modelview.js calls it once, after initDiff). */
export function initFix() {
  const zone = byId('diff-dropzone');
  const diffOut = byId('diff-out');
  if (!zone || !diffOut) return;
  const remember = (list) => { if (list && list.length) files = [...list]; };
  zone.addEventListener('diff-files', (event) => { // diff.js: chosen, dropped or the example
    remember(event.detail);
    result = null;
  });
  zone.addEventListener('diff-result', (event) => { result = event.detail; });
  const bar = h('div', { id: 'fix-bar', hidden: true },
    h('button', { id: 'fix-button', type: 'button', text: `Fix for ${TARGET}` }),
    h('span', { class: 'hint', text: ` Writes a model that computes on ${TARGET} what the original computes on `
      + `${REFERENCE}, downloads it, and shows the proof.` }));
  const errors = h('div', { id: 'fix-errors', class: 'errors', role: 'alert' });
  const out = h('div', { id: 'fix-out', class: 'scan-out', 'aria-live': 'polite' });
  diffOut.after(bar, errors, out);
  byId('fix-button').addEventListener('click', () => runFix(out, errors));
  // The button shows once a diff result with something to fix is on screen for a model this page still holds.
  new MutationObserver(() => {
    bar.hidden = !(diffOut.querySelector('.diff-verdict') && fixable(result)
      && files.some((f) => /\.onnx$/i.test(f.name)));
    out.replaceChildren();
    errors.replaceChildren();
  }).observe(diffOut, { childList: true });
}

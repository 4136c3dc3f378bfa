// The model drop zone: an .onnx model or an IR .xml (+ .bin) goes to /v1/models/inspect; every clip found
// comes back as a row with its status per target, and a button that opens its spec in the editor.
// Imported by modelview.js only.

import { api, showProblem } from './api.js';
import { byId, fill, h, wireDropZone } from './dom.js';
import { readingLabel } from './readings.js';

function pickFiles(files) {
  const list = [...files];
  const model = list.find((f) => /\.(onnx|xml)$/i.test(f.name)) || list.find((f) => !/\.bin$/i.test(f.name));
  const weights = list.find((f) => /\.bin$/i.test(f.name));
  return { model, weights };
}

function statusCell(t, label) {
  if (!t) return h('td', { 'data-label': label, text: '—' });
  const worst = t.findings.find((f) => f.severity === 'error') || t.findings.find((f) => f.severity === 'warning');
  return h('td', { 'data-label': label }, h('span', { class: `badge badge-${t.status}`, text: t.status }),
    worst ? h('small', { class: 'cell-note', text: ` ${worst.code}` }) : null);
}

function table(res, onOpen) {
  const labels = res.targets.map((t) => t.label);
  const head = h('tr', {}, ['#', 'Path', 'Node', 'Pattern', 'dtype', ...labels, 'Notes', ''].map(
    (c) => h('th', { scope: 'col', text: c })));
  const rows = res.clips.map((clip) => {
    const byLabel = Object.fromEntries(clip.translations.map((t) => [t.label, t]));
    // A finding that holds under another reading says which (the API's `reading`, null: the specification).
    const notes = [clip.error, ...clip.findings.map((f) => `${f.severity} ${f.code}`
      + `${f.reading ? ` (${readingLabel(f.reading)})` : ''}: ${f.message}`)].filter(Boolean);
    const open = clip.spec
      ? h('button', { type: 'button', class: 'open-clip', 'aria-label': `Inspect clip ${clip.id} (${clip.node})`,
        onclick: () => onOpen(clip.spec) }, 'Inspect')
      : null;
    const cell = (label, props, ...kids) => h('td', { 'data-label': label, ...props }, ...kids);
    return h('tr', { class: 'clip-row' },
      cell('#', { text: clip.id }), cell('Path', { text: clip.path }), cell('Node', {}, h('code', { text: clip.node })),
      cell('Pattern', { text: clip.pattern }), cell('dtype', { text: clip.dtype ?? '?' }),
      labels.map((l) => statusCell(byLabel[l], l)),
      notes.length ? cell('Notes', { class: 'notes-cell', text: notes.join('; ') }) : cell('Notes', { class: 'notes-cell empty' }),
      cell('', { class: 'open-cell' }, open));
  });
  return h('table', { class: 'scan-table cards' },
    h('caption', { text: `${res.format} model: ${res.summary.clips} clip${res.summary.clips === 1 ? '' : 's'}` }),
    h('thead', {}, head), h('tbody', {}, rows));
}

function summary(res) {
  const counts = res.summary.targets.map((t) => `${t.label}: ${t.exact} exact, ${t.drift} drift, ${t.unsupported} unsupported`);
  const worst = res.summary.worst;
  return h('div', { class: 'scan-summary' },
    h('p', { text: counts.join(' · ') }),
    worst ? h('p', {}, 'Worst: ', h('span', { class: `sev sev-${worst.severity}`, text: worst.severity }), ' ',
      h('code', { text: worst.code }), ` (clip ${worst.clip}, ${worst.label}): ${worst.message}`) : null);
}

// Ops that clip without being a Clip (Relu, HardSigmoid, ...): listed with each engine's NaN rule (docs/diff.md).
function clipLike(res) {
  if (!res.clip_like || !res.clip_like.length) return null;
  return h('ul', { class: 'clip-like' }, res.clip_like.map((c) => h('li', {}, h('code', { text: c.node }),
    ` ${c.pattern}: NaN → ${Object.entries(c.nan_input).map(([e, r]) => `${e} ${r}`).join(', ')}`)));
}

/** Wire the drop zone. targets(): labels such as 'directml:6_4'; mode(): 'preserve'|'literal'; status(text): the
 * model view's header line. Returns upload(files) for "Try the example model". */
export function initScan({ targets, mode, onOpen, status = () => {} }) {
  const zone = byId('dropzone');
  const input = byId('model-file');
  const out = byId('scan-out');
  const errors = byId('scan-errors');

  async function upload(files) {
    const { model, weights } = pickFiles(files);
    errors.replaceChildren();
    if (!model) {
      errors.textContent = 'Choose an .onnx model or an IR .xml file.';
      return;
    }
    const form = new FormData();
    form.append('model', model, model.name);
    if (weights && /\.xml$/i.test(model.name)) form.append('weights', weights, weights.name);
    const query = new URLSearchParams(targets().map((t) => ['target', t]));
    query.append('mode', mode());
    out.replaceChildren(h('p', { text: `Scanning ${model.name}…` }));
    status(`Scanning ${model.name}…`);
    try {
      const res = await api('/v1/models/inspect', { body: form, query });
      fill(out, h('p', { class: 'scan-file', text: model.name }), summary(res), table(res, onOpen), clipLike(res));
      status(`Scanned ${model.name}: ${res.summary.clips} clip${res.summary.clips === 1 ? '' : 's'}`);
    } catch (exc) {
      out.replaceChildren();
      showProblem(errors, exc);
      status(`Scan of ${model.name} failed`);
    }
  }

  wireDropZone(zone, input, upload);
  return { upload };
}

// One panel per target dialect: version selector, status badge, target spec, findings with witnesses
// (each one runnable through /v1/compare), and the artifacts to download or copy.
// Imported by specview.js, translate.js and dialects.js only.

import { ApiError, api } from './api.js';
import { copyText, download, fill, fromBase64, h } from './dom.js';
import { meaningLabel, readingLabel } from './readings.js';

// Display names where the plain dialect name reads badly; any other registered dialect shows its name.
export const DIALECT_NAMES = { onnx: 'ONNX', openvino: 'OpenVINO', directml: 'DirectML' };
// Filled from /v1/dialects (registerDialects): each dialect's target version field and whether it is a number.
export const VERSION_KEY = {};
const NUMERIC = new Set();

export const dialectName = (dialect) => DIALECT_NAMES[dialect] || dialect;
const versionLabel = (dialect) => (VERSION_KEY[dialect] || 'version').replace(/_/g, ' ');

/** Learn every registered dialect's target version field from its /v1/dialects row. */
export function registerDialects(rows) {
  for (const d of rows) {
    VERSION_KEY[d.dialect] = d.version_field || 'version';
    if (typeof d.default_target[VERSION_KEY[d.dialect]] === 'number') NUMERIC.add(d.dialect);
  }
}

/** The partial spec naming a target version: {"dialect": "onnx", "opset": 11}. */
export function targetRef(dialect, version) {
  if (version === undefined || version === null || version === '') return { dialect };
  return { dialect, [VERSION_KEY[dialect]]: NUMERIC.has(dialect) ? Number(version) : version };
}

/** 'onnx:13', 'directml:5_0': how /v1/compare and the scan label a target. */
export const refLabel = (ref) => (ref[VERSION_KEY[ref.dialect]] === undefined ? ref.dialect
  : `${ref.dialect}:${ref[VERSION_KEY[ref.dialect]]}`);

function badge(status) {
  return h('span', { class: `badge badge-${status}`, text: status });
}

function flash(el, text) {
  el.textContent = text;
  setTimeout(() => { el.textContent = ''; }, 2000);
}

function witnessBlock(witness, ctx, ref, reading) {
  const out = h('output', { class: 'witness-result', 'aria-live': 'polite' });
  const run = async () => {
    out.textContent = 'Running…';
    out.className = 'witness-result';
    try {
      const res = await api('/v1/compare', { json: {
        spec: ctx.source, mode: ctx.mode, backend: 'numpy',
        input: { dtype: ctx.dtype, shape: [1], data: [witness.input] },
        targets: [ctx.source.dialect, ref],
        ...(reading ? { reading } : {}), // a reading's witness holds under that reading: run it there
      } });
      const parts = res.outputs.map((o) => `${o.semantics} [${readingLabel(o.reading, o.shows)}]: `
        + `${o.output ? o.output.data[0] : `error (${o.error})`}`);
      const differing = res.pairs.length ? res.pairs[0].differing : 0;
      out.textContent = `${parts.join(' · ')} (${differing ? 'outputs differ' : 'same output'})`;
      out.classList.add(differing ? 'differ' : 'same');
    } catch (exc) {
      out.textContent = exc instanceof ApiError ? `${exc.status}: ${exc.message}` : String(exc);
      out.classList.add('failed');
    }
  };
  return h('div', { class: 'witness' },
    h('span', { class: 'witness-text' }, 'Witness ', h('span', { class: 'reading', text: `(${readingLabel(reading)})` }),
      ': x = ', h('code', { text: witness.input }),
      ' gives ', h('code', { text: witness.source_output }), ' (source) and ',
      h('code', { text: witness.target_output }), ' (target)'),
    h('button', { type: 'button', class: 'run-witness', onclick: run }, 'Run witness'),
    out);
}

/** Which reading a finding reports: its `reading` when the API names one; an engine-behaviour finding is what an
 * engine was observed to do; any other finding reads the specification. */
function findingReading(f) {
  if (f.reading) return readingLabel(f.reading);
  return f.code === 'engine-behaviour' ? 'observed engine' : readingLabel(null);
}

function findingItem(f, ctx, ref) {
  const behaviours = [];
  if (f.source_behaviour) behaviours.push(h('dt', { text: 'source' }), h('dd', { text: f.source_behaviour }));
  if (f.target_behaviour) behaviours.push(h('dt', { text: 'target' }), h('dd', { text: f.target_behaviour }));
  return h('li', { class: `finding sev-${f.severity}` },
    h('span', { class: 'sev', text: f.severity }), ' ', h('code', { class: 'code', text: f.code }),
    h('span', { class: 'reading-tag', text: findingReading(f) }),
    h('p', { class: 'message', text: f.message }),
    behaviours.length ? h('dl', { class: 'behaviours' }, behaviours) : null,
    f.witness ? witnessBlock(f.witness, ctx, ref, f.witness.reading || f.reading) : null);
}

const KNOWN_ARTIFACTS = new Set(['onnx_model', 'ir_xml', 'ir_bin', 'cpp']);

function artifactButtons(t, dialect) {
  const a = t.artifacts || {};
  const base = `clip-${dialect}`;
  const done = h('span', { class: 'done', role: 'status' });
  const items = [];
  const dl = (label, name, data, type) => items.push(
    h('button', { type: 'button', class: 'download', onclick: () => download(name, data, type) }, label));
  const cp = (label, text) => items.push(h('button', { type: 'button', class: 'copy', onclick: async () => {
    flash(done, (await copyText(text)) ? `${label}: copied` : 'copy failed');
  } }, label));
  if (a.onnx_model) dl('Download .onnx', `${base}.onnx`, fromBase64(a.onnx_model), 'application/octet-stream');
  if (a.ir_xml) dl('Download .xml', `${base}.xml`, a.ir_xml, 'application/xml');
  if (a.ir_bin) dl('Download .bin', `${base}.bin`, fromBase64(a.ir_bin), 'application/octet-stream');
  if (a.cpp) dl('Download .cpp', `${base}.cpp`, a.cpp, 'text/x-c++src');
  if (t.target) dl('Download .json', `${base}.json`, `${JSON.stringify(t.target, null, 2)}\n`, 'application/json');
  if (t.target) cp('Copy spec', JSON.stringify(t.target, null, 2));
  if (a.ir_xml) cp('Copy IR XML', a.ir_xml);
  if (a.cpp) cp('Copy C++', a.cpp);
  if (a.onnx_model) cp('Copy base64 model', a.onnx_model);
  // Any other text artifact a dialect emits (StableHLO's MLIR, ...): download and copy it as it is.
  for (const [key, text] of Object.entries(a)) {
    if (KNOWN_ARTIFACTS.has(key) || typeof text !== 'string') continue;
    dl(`Download ${key}`, `${base}-${key}.txt`, text, 'text/plain');
    cp(`Copy ${key}`, text);
  }
  return items.length ? h('div', { class: 'artifacts', role: 'group', 'aria-label': 'Artifacts' }, items, done) : null;
}

/** A target panel: the header (with its version selector) stays; the body is redrawn per translation. */
export class TargetPanel {
  constructor(dialect, versions, version, onVersion) {
    this.dialect = dialect;
    const id = `target-${dialect}`;
    this.select = h('select', { id: `${id}-version`, class: 'version' },
      versions.map((v) => h('option', { value: String(v.value), text: v.label })));
    this.select.value = String(version);
    this.select.addEventListener('change', () => onVersion(dialect, this.select.value));
    this.badge = h('span', { class: 'badge-slot' });
    this.body = h('div', { class: 'target-body' });
    this.el = h('section', { id, class: 'card target', 'aria-labelledby': `${id}-h` },
      h('header', { class: 'target-head' },
        h('h2', { id: `${id}-h`, text: dialectName(dialect) }),
        h('label', { for: this.select.id, text: `${dialectName(dialect)} ${versionLabel(dialect)}` }),
        this.select, this.badge),
      this.body);
  }

  setVersion(version) {
    if (![...this.select.options].some((o) => o.value === String(version))) {
      this.select.append(h('option', { value: String(version), text: String(version) }));
    }
    this.select.value = String(version);
  }

  busy() {
    this.el.classList.add('stale');
  }

  error(message) {
    this.el.classList.remove('stale');
    this.badge.replaceChildren();
    this.body.replaceChildren(h('p', { class: 'errors', role: 'alert', text: message }));
  }

  /** t: one TranslateResponse translation; ctx: {source, mode, dtype} for running witnesses. */
  show(t, ctx, ref) {
    this.el.classList.remove('stale');
    this.badge.replaceChildren(badge(t.status));
    const findings = t.findings.length
      ? h('ul', { class: 'findings' }, t.findings.map((f) => findingItem(f, ctx, ref)))
      : h('p', { class: 'none', text: 'No findings.' });
    fill(this.body,
      t.meaning ? h('p', { class: 'meaning' }, h('span', { class: 'reading', text: `${meaningLabel(t.meaning)}: ` }),
        t.meaning.summary)
        : null,
      h('details', { class: 'target-spec', open: true },
        h('summary', { text: 'Target spec' }),
        h('pre', { text: t.target ? JSON.stringify(t.target, null, 2) : 'none: the target cannot express this clip' })),
      h('h3', { text: `Findings (${t.findings.length})` }),
      findings,
      artifactButtons(t, this.dialect));
  }
}

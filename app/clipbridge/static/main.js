// The inspector: wires the source editor, the live translation panels, the transfer plot, the model
// view's drop zones (scan, diff and its Fix button, the converter chain) and the permalink (the whole view
// lives in the URL fragment).

import { ApiError, api } from './api.js';
import { byId, copy, copyText, fill, h } from './dom.js';
import { SourceEditor } from './editor.js';
import { parseJsonExact, samplesFor } from './numbers.js';
import { initChain } from './chain.js';
import { initDiff } from './diff.js';
import { initFix } from './fix.js';
import { clearPlot, renderPlot } from './plot.js';
import { meaningLabel } from './readings.js';
import { initScan } from './scan.js';
import { cardOf, isModelHash, modelHash, restoreModel, sectionOf } from './modelurl.js';
import { TargetPanel, VERSION_KEY, dialectName, refLabel, registerDialects, targetRef } from './targets.js';

// Every registered dialect, in registry order, and the default targets (in_defaults): both from /v1/dialects,
// so a dialect added to the registry appears here (source choice, form, examples, panels, plot) by itself.
let DIALECTS = [];
const COMPARE_MAX = 8; // CompareRequest.targets max_length
// The example a dialect starts from (its first example when it has none of this name): docs/inspector.md.
const START = 'start';
let DEFAULTS = [];
// targets: the dialects translated to (panels, plot and scan columns); the defaults unless the user adds more.
const state = { spec: null, mode: 'preserve', versions: {}, targets: [], last: null, lastKey: '' };
let caps;
let editor;
let panels = [];
let seq = 0;
let timer = null;

// The header's status line belongs to the view shown: each view keeps its own line, and a switch shows it.
const VIEWS = [['spec-view', 'view-spec'], ['model-view', 'view-model']];
const statuses = { 'spec-view': 'Loading…', 'model-view': 'Drop a model, or try the example model.' };
let shown = 'spec-view';
const model = { section: null, example: false };  // the model view's URL state (modelurl.js)
function setStatus(text, view = 'spec-view') {
  statuses[view] = text;
  if (view === shown) byId('status').textContent = text;
}
const setModelStatus = (text) => setStatus(text, 'model-view');
const refs = () => panels.map((p) => targetRef(p.dialect, state.versions[p.dialect]));
const plotEls = () => [byId('plot'), byId('plot-legend'), byId('plot-notes')];

/** Selector options from a /v1/dialects row: ONNX opsets and OpenVINO opsetN ranges read from their rows, any
 * other dialect's target_versions (the versions the registry's dialect accepts). */
function versionOptions(d) {
  if (d.dialect === 'onnx') {
    return d.versions.map((v) => {
      const opset = Number((v.selects.match(/\d+/) || ['0'])[0]);
      return { value: opset, label: `opset ${opset} (${v.version})` };
    });
  }
  if (d.dialect === 'openvino') {
    const m = d.versions.map((v) => v.selects.match(/opset(\d+)\.\.opset(\d+)/)).find(Boolean);
    const [lo, hi] = m ? [Number(m[1]), Number(m[2])] : [1, 1];
    const out = [];
    for (let n = lo; n <= hi; n++) out.push({ value: `opset${n}`, label: `opset${n}` });
    return out;
  }
  if (d.dialect === 'directml') {
    return d.versions.map((v) => ({ value: v.version, label: `FL ${v.version.replace('_', '.')}` }));
  }
  return (d.target_versions || []).map((v) => ({ value: v, label: v }));
}

async function loadCaps() {
  const res = await api('/v1/dialects');
  registerDialects(res.dialects);
  const out = { editor: {}, targets: {}, defaults: {}, examples: [], templates: {} };
  for (const d of res.dialects) {
    const options = versionOptions(d);
    out.targets[d.dialect] = options;
    out.defaults[d.dialect] = d.default_target[VERSION_KEY[d.dialect]];
    out.editor[d.dialect] = {
      dtypes: [...new Set(d.versions.flatMap((v) => v.dtypes))],
      versions: options.map((o) => String(o.value)),
      schema: d.spec_schema,
    };
    const named = Object.entries(d.examples || {});
    for (const [name, spec] of named) {
      out.examples.push({ id: `${d.dialect}-${name}`, dialect: d.dialect, label: name, spec });
    }
    if (named.length) out.templates[d.dialect] = d.examples[START] || named[0][1];
  }
  DIALECTS = res.dialects.map((d) => d.dialect);
  DEFAULTS = res.dialects.filter((d) => d.in_defaults !== false).map((d) => d.dialect);
  return out;
}

// --- permalink ---------------------------------------------------------------------------------------

function writeHash() {
  if (shown === 'model-view') return;  // the model view has its own URL (writeModelHash)
  const params = new URLSearchParams({ spec: JSON.stringify(state.spec), mode: state.mode });
  for (const d of state.targets) params.set(d, String(state.versions[d]));
  if (state.targets.join() !== DEFAULTS.join()) params.set('targets', state.targets.join(','));
  const hash = `#${params}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

function writeModelHash() {
  const hash = modelHash(model.section, model.example);
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

/** A model-view link: its options filled, the view shown, its card in sight; the example model run again. */
function openModelLink(scan, diff) {
  Object.assign(model, restoreModel(location.hash));
  showView('model-view');
  if (model.section) cardOf(model.section).scrollIntoView();
  if (model.example) tryExample(scan, diff);
  else setModelStatus('This link restores the view and its options; drop the model again (a link never carries one).');
}

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has('spec')) return false;
  let spec;
  try {
    spec = parseJsonExact(params.get('spec'));
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new Error('not a JSON object');
  } catch (exc) {
    setStatus(`The link's spec is not usable: ${exc.message}`);
    return false;
  }
  for (const d of DIALECTS) if (params.get(d)) state.versions[d] = params.get(d);
  if (params.has('targets')) setTargets(params.get('targets').split(',').filter((d) => DIALECTS.includes(d)));
  setMode(params.get('mode') === 'literal' ? 'literal' : 'preserve');
  setSpec(spec);
  return true;
}

// --- state changes -----------------------------------------------------------------------------------

function setMode(mode) {
  state.mode = mode;
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.checked = radio.value === mode;
}

/** The chosen targets, in registry order; the checkboxes follow. */
function setTargets(list) {
  state.targets = DIALECTS.filter((d) => list.includes(d));
  for (const box of document.querySelectorAll('input[name="target"]')) box.checked = state.targets.includes(box.value);
}

function buildPanels() {
  const wanted = state.targets.filter((d) => d !== state.spec.dialect);
  if (panels.map((p) => p.dialect).join() !== wanted.join()) {
    seq += 1; // an answer still in flight was asked for the old panels: drop it (a new update is scheduled)
    panels = wanted.map((d) => new TargetPanel(d, caps.targets[d], state.versions[d], onVersion));
    byId('targets').replaceChildren(...panels.map((p) => p.el));
  }
  for (const p of panels) p.setVersion(state.versions[p.dialect]);
}

function setSpec(spec) {
  state.spec = spec;
  editor.set(spec);
  buildPanels();
  schedule(0);
}

function onEdit(spec) {
  state.spec = spec;
  if (DIALECTS.includes(spec.dialect)) buildPanels();
  schedule(300);
}

function onVersion(dialect, version) {
  state.versions[dialect] = version;
  schedule(0);
}

/** A new source dialect: the current translation into it when there is one, else its starting spec, else (a
 * dialect with no examples) just its name, which the editor's errors then complete. */
function switchDialect(dialect) {
  const fresh = state.last && state.lastKey === JSON.stringify(state.spec) &&
    state.last.translations.find((t) => t.target && t.target.dialect === dialect);
  setSpec(copy(fresh ? fresh.target : caps.templates[dialect] || { dialect }));
}

function schedule(delay) {
  clearTimeout(timer);
  writeHash();
  timer = setTimeout(update, delay);
}

// --- translation and plot ----------------------------------------------------------------------------

function showMeaning(m) {
  const steps = [m.lower, m.upper].filter(Boolean).flatMap((b) => b.steps);
  const extra = [m.reason, ...m.readings].filter(Boolean);
  fill(byId('meaning'), h('span', { class: 'reading', text: `${meaningLabel(m)}: ` }), h('strong', { text: m.version }),
    ` · ${m.summary}`,
    steps.length ? h('span', { class: 'steps', text: ` (${steps.join('; ')})` }) : null,
    extra.length ? h('span', { class: 'steps', text: ` ${extra.join('; ')}` }) : null);
}

function showFailure(exc) {
  const errors = exc instanceof ApiError ? exc.errors : [];
  const detail = exc instanceof ApiError ? `${exc.problem.title || 'Error'}: ${exc.message}` : String(exc);
  const own = errors.filter((e) => !String(e.loc).startsWith('targets'));
  // Each message is shown once: a field error beside its field or in the list under the spec, a target's in its
  // panel, the detail (the service writes it from the same errors) only when there are none; the header says where.
  editor.showErrors(own, errors.length ? null : detail);
  panels.forEach((p, i) => {
    const mine = errors.filter((e) => String(e.loc).startsWith(`targets[${i}]`));
    p.error(mine.length ? mine.map((e) => `${e.loc}: ${e.msg}`).join('; ') : 'No translation: fix the source spec.');
  });
  byId('meaning').replaceChildren();
  clearPlot(...plotEls(), 'No plot: the spec has errors.');
  const where = own.length || !errors.length ? 'the source spec' : 'the translation panels';
  setStatus(`Error: not translated; the problem is shown with ${where}.`);
}

async function update() {
  const my = ++seq;
  const spec = state.spec;
  const targets = refs();
  const mode = state.mode;
  panels.forEach((p) => p.busy());
  setStatus('Translating…');
  let res;
  try {
    res = await api('/v1/translate', { json: { spec, targets, mode } });
  } catch (exc) {
    if (my === seq) showFailure(exc);
    return;
  }
  if (my !== seq) return;
  state.last = res;
  state.lastKey = JSON.stringify(spec);
  editor.showErrors([]);
  showMeaning(res.meaning);
  const ctx = { source: spec, mode, dtype: res.meaning.dtype };
  res.translations.forEach((t, i) => panels[i].show(t, ctx, targets[i]));
  byId('targets').dataset.spec = state.lastKey; // which spec the panels show (tools and tests wait on it)
  const counts = res.translations.map((t, i) => `${refLabel(targets[i])} ${t.status}`).join(', ');
  setStatus(`Translated (${mode}): ${counts}`);
  await updatePlot(res, spec, targets, mode, my);
}

async function updatePlot(res, spec, targets, mode, my) {
  const sample = samplesFor(res.meaning);
  if (!sample.xs.length) {
    clearPlot(...plotEls(), `No plot for dtype ${res.meaning.dtype}.`);
    return;
  }
  try {
    // /v1/compare takes up to 8 semantics: more targets go in several calls, each with the source first.
    const input = { dtype: res.meaning.dtype, shape: [sample.xs.length], data: sample.xs };
    const calls = [];
    for (let i = 0; i < Math.max(targets.length, 1); i += COMPARE_MAX - 1) {
      calls.push(api('/v1/compare', { json: {
        spec, mode, backend: 'numpy', targets: [spec.dialect, ...targets.slice(i, i + COMPARE_MAX - 1)], input,
      } }));
    }
    const answers = await Promise.all(calls);
    const outputs = [answers[0].outputs[0], ...answers.flatMap((a) => a.outputs.slice(1))];
    if (my === seq) renderPlot(...plotEls(), sample, outputs);
  } catch (exc) {
    if (my === seq) clearPlot(...plotEls(), `No plot: ${exc.message}`);
  }
}

// --- hooks for the editor's view switches ------------------------------------------------------------

async function toCompact(spec) {
  try {
    return (await api('/v1/translate', { json: { spec, targets: [spec.dialect] } })).source;
  } catch {
    return null;
  }
}

async function toIr(spec) {
  try {
    const res = await api('/v1/translate', { json: { spec, targets: [targetRef('openvino', state.versions.openvino)] } });
    return res.translations[0].artifacts.ir_xml;
  } catch {
    return null;
  }
}

// --- start -------------------------------------------------------------------------------------------

/** One option per registered dialect in the source selector, one checkbox per dialect in the target chooser. */
function dialectControls() {
  byId('dialect').replaceChildren(...DIALECTS.map((d) => h('option', { value: d, text: dialectName(d) })));
  byId('target-choices').replaceChildren(...DIALECTS.map((d) => {
    const box = h('input', { type: 'checkbox', name: 'target', value: d });
    box.checked = state.targets.includes(d);
    box.addEventListener('change', () => {
      setTargets(box.checked ? [...state.targets, d] : state.targets.filter((t) => t !== d));
      buildPanels();
      schedule(0);
    });
    return h('label', {}, box, ` ${dialectName(d)}`);
  }));
}

/** One menu of every registered dialect's examples, grouped by dialect (in registry order), labelled by name. */
function exampleMenu() {
  const menu = byId('examples');
  menu.replaceChildren(h('option', { value: '', text: 'Choose an example…' }), ...DIALECTS.map((d) => {
    const mine = caps.examples.filter((ex) => ex.dialect === d);
    return mine.length ? h('optgroup', { label: dialectName(d) },
      mine.map((ex) => h('option', { value: ex.id, text: ex.label }))) : null;
  }).filter(Boolean));
  menu.addEventListener('change', () => {
    const ex = caps.examples.find((e) => e.id === menu.value);
    menu.value = '';  // the menu is an action: the same example can be chosen again
    if (ex) setSpec(copy(ex.spec));  // the spec only: the translation mode stays the user's choice
  });
}

/** The page's first spec: the starting spec of the first dialect (registry order) that has examples. */
function firstSpec() {
  const d = DIALECTS.find((name) => caps.templates[name]);
  return d ? caps.templates[d] : { dialect: DIALECTS[0] };
}

/** The view switch: the spec view (source, translations, plot) or the model view (scan, diff and fix). */
function showView(name) {
  shown = name;
  for (const [view, button] of VIEWS) {
    byId(view).hidden = view !== name;
    byId(button).setAttribute('aria-pressed', String(view === name));
  }
  byId('status').textContent = statuses[name];
  byId('status').dataset.view = name;
  if (name === 'model-view') writeModelHash();
  else if (state.spec) writeHash();
}

/** "Try the example model": the bundled app/clipbridge/static/example.onnx (a copy of docs/example.onnx), scanned and diffed. */
async function tryExample(scan, diff) {
  model.example = true;
  writeModelHash();
  const button = byId('try-example');
  button.disabled = true;
  try {
    const response = await fetch('/static/example.onnx');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const file = new File([await response.blob()], 'example.onnx', { type: 'application/octet-stream' });
    await Promise.all([scan.upload([file]), diff.upload([file])]);
  } catch (exc) {
    setModelStatus(`The example model could not be loaded: ${exc.message}`);
  } finally {
    button.disabled = false;
  }
}

async function start() {
  // the diff and its Fix button need no dialect list: wired even when /v1/dialects fails
  const diff = initDiff({ status: setModelStatus });
  initFix();
  initChain({ status: setModelStatus });
  byId('view-spec').addEventListener('click', () => showView('spec-view'));
  byId('view-model').addEventListener('click', () => showView('model-view'));
  let scan = { upload: async () => setModelStatus('The scan needs /v1/dialects, which did not answer.') };
  byId('try-example').addEventListener('click', () => tryExample(scan, diff));
  try {
    caps = await loadCaps();
  } catch (exc) {
    setStatus(`The service did not answer /v1/dialects: ${exc.message}`);
    return;
  }
  state.versions = { ...caps.defaults };
  state.targets = [...DEFAULTS];
  dialectControls();
  editor = new SourceEditor(caps.editor, onEdit, { toCompact, toIr });
  exampleMenu();
  byId('dialect').addEventListener('change', (event) => switchDialect(event.target.value));
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener('change', () => {
      if (!radio.checked) return;
      state.mode = radio.value;
      schedule(0);
    });
  }
  byId('copy-link').addEventListener('click', async () => {
    const done = byId('copy-link-done');
    done.textContent = (await copyText(location.href)) ? 'Link copied' : 'Copy failed: use the address bar';
    setTimeout(() => { done.textContent = ''; }, 2000);
  });
  window.addEventListener('hashchange', () => (isModelHash(location.hash) ? openModelLink(scan, diff) : readHash()));
  for (const type of ['focusin', 'change', 'drop']) {
    byId('model-view').addEventListener(type, (event) => {
      const section = sectionOf(event.target);
      if (section) model.section = section;
      if (type === 'drop') model.example = false;  // the user's own model: a link cannot bring it back
      writeModelHash();
    }, true);
  }
  scan = initScan({
    status: setModelStatus,
    targets: () => state.targets.map((d) => refLabel(targetRef(d, state.versions[d]))),
    mode: () => state.mode,
    onOpen: (spec) => {
      setSpec(copy(spec));
      showView('spec-view');
      byId('source').scrollIntoView();
      byId('dialect').focus();
    },
  });
  if (isModelHash(location.hash)) {
    openModelLink(scan, diff);
    setSpec(copy(firstSpec()));  // the spec view behind it starts as a first visit does
  } else if (!readHash()) setSpec(copy(firstSpec()));
}

start();

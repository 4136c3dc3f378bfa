// The spec view's wiring: its state (the spec, the translation mode, the targets and their versions), the source
// editor, the target panels, the dialect and target choosers, the example menu, the mode radios, the copy-link
// button and the permalink (specurl.js); each change schedules a translation (translate.js).
// Imported by main.js only.

import { byId, copy, copyText, h } from './dom.js';
import { SourceEditor } from './editor.js';
import { readSpecHash, specHash } from './specurl.js';
import { TargetPanel, dialectName, refLabel, targetRef } from './targets.js';
import { toCompact, toIr, update } from './translate.js';
import { onShow, setStatus, shownView } from './views.js';

// Every registered dialect, in registry order, and the default targets (in_defaults): both from /v1/dialects,
// so a dialect added to the registry appears here (source choice, form, examples, panels, plot) by itself.
let DIALECTS = [];
let DEFAULTS = [];
// targets: the dialects translated to (panels, plot and scan columns); the defaults unless the user adds more.
const state = { spec: null, mode: 'preserve', versions: {}, targets: [], last: null, lastKey: '' };
// What translate.js works on: the state, the panels shown, the editor, and seq (the last update's number).
const view = { state, panels: [], editor: null, seq: 0 };
let caps;
let timer = null;

// --- permalink ---------------------------------------------------------------------------------------

function writeHash() {
  if (shownView() === 'model-view') return;  // the model view has its own URL (modelview.js)
  const hash = specHash(state, DEFAULTS);
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

/** A spec-view link in the URL applied; false when the URL holds none (or an unusable spec). */
export function readHash() {
  const link = readSpecHash(location.hash, DIALECTS);
  if (!link) return false;
  if ('error' in link) {
    setStatus(`The link's spec is not usable: ${link.error}`);
    return false;
  }
  Object.assign(state.versions, link.versions);
  if (link.targets) setTargets(link.targets);
  setMode(link.mode);
  setSpec(link.spec);
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
  if (view.panels.map((p) => p.dialect).join() !== wanted.join()) {
    view.seq += 1; // an answer still in flight was asked for the old panels: drop it (a new update is scheduled)
    view.panels = wanted.map((d) => new TargetPanel(d, caps.targets[d], state.versions[d], onVersion));
    byId('targets').replaceChildren(...view.panels.map((p) => p.el));
  }
  for (const p of view.panels) p.setVersion(state.versions[p.dialect]);
}

export function setSpec(spec) {
  state.spec = spec;
  view.editor.set(spec);
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
  timer = setTimeout(() => update(view), delay);
}

// --- controls ----------------------------------------------------------------------------------------

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
export function firstSpec() {
  const d = DIALECTS.find((name) => caps.templates[name]);
  return d ? caps.templates[d] : { dialect: DIALECTS[0] };
}

/** The targets as the scan's columns name them, and the translation mode (the scan asks with both). */
export const targetLabels = () => state.targets.map((d) => refLabel(targetRef(d, state.versions[d])));
export const currentMode = () => state.mode;

/** The spec view wired from the page's capabilities (dialects.js); no spec shown yet (setSpec or readHash). */
export function initSpecView(pageCaps) {
  caps = pageCaps;
  DIALECTS = caps.dialects;
  DEFAULTS = caps.defaultTargets;
  onShow('spec-view', () => state.spec && writeHash());
  state.versions = { ...caps.defaults };
  state.targets = [...DEFAULTS];
  dialectControls();
  view.editor = new SourceEditor(caps.editor, onEdit, { toCompact, toIr: (spec) => toIr(spec, state.versions.openvino) });
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
}

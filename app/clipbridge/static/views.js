// The view switch and the header's status line: the spec view (source, translations, plot) or the model view
// (scan, diff and fix, the converter chain). Each view keeps its own status line, and a switch shows it; each
// view's module registers how its URL fragment is written when it is shown (onShow).
// Imported by main.js, specview.js, translate.js and modelview.js (the page's wiring); no other module.

import { byId } from './dom.js';

const VIEWS = [['spec-view', 'view-spec'], ['model-view', 'view-model']];
const statuses = { 'spec-view': 'Loading…', 'model-view': 'Drop a model, or try the example model.' };
const writers = {};  // view -> writes that view's URL fragment once it is shown (specview.js, modelview.js)
let shown = 'spec-view';

export const shownView = () => shown;

export function setStatus(text, view = 'spec-view') {
  statuses[view] = text;
  if (view === shown) byId('status').textContent = text;
}

export const setModelStatus = (text) => setStatus(text, 'model-view');

/** What showView(view) does after the switch: write that view's URL fragment. */
export function onShow(view, writeHash) {
  writers[view] = writeHash;
}

/** The view switch: the spec view or the model view. */
export function showView(name) {
  shown = name;
  for (const [view, button] of VIEWS) {
    byId(view).hidden = view !== name;
    byId(button).setAttribute('aria-pressed', String(view === name));
  }
  byId('status').textContent = statuses[name];
  byId('status').dataset.view = name;
  if (writers[name]) writers[name]();
}

/** The header's two view buttons. */
export function initViewSwitch() {
  byId('view-spec').addEventListener('click', () => showView('spec-view'));
  byId('view-model').addEventListener('click', () => showView('model-view'));
}

// The inspector page's entry module: starts the view switch (views.js) and the model view's cards (modelview.js),
// reads the dialects (dialects.js), then wires the spec view (specview.js), the scan, and the URL fragment that
// holds the whole view (a spec-view or a model-view link).
// Loaded by index.html; no module imports it.

import { byId, copy } from './dom.js';
import { loadCaps } from './dialects.js';
import { isModelHash } from './modelurl.js';
import { initModelCards, initModelLinks, openModelLink } from './modelview.js';
import { currentMode, firstSpec, initSpecView, readHash, setSpec, targetLabels } from './specview.js';
import { initViewSwitch, setStatus, showView } from './views.js';

async function start() {
  // the diff and its Fix button need no dialect list: wired even when /v1/dialects fails
  initModelCards();
  initViewSwitch();
  let caps;
  try {
    caps = await loadCaps();
  } catch (exc) {
    setStatus(`The service did not answer /v1/dialects: ${exc.message}`);
    return;
  }
  initSpecView(caps);
  window.addEventListener('hashchange', () => (isModelHash(location.hash) ? openModelLink() : readHash()));
  initModelLinks({
    targets: targetLabels,
    mode: currentMode,
    onOpen: (spec) => {
      setSpec(copy(spec));
      showView('spec-view');
      byId('source').scrollIntoView();
      byId('dialect').focus();
    },
  });
  if (isModelHash(location.hash)) {
    openModelLink();
    setSpec(copy(firstSpec()));  // the spec view behind it starts as a first visit does
  } else if (!readHash()) setSpec(copy(firstSpec()));
}

start();

// The model view's wiring: its cards (the scan, the diff and its Fix bar, the converter chain), "Try the example
// model", and its URL state (the card last used, whether the example model is shown; modelurl.js writes and reads
// the fragment). Imported by main.js only.

import { initChain } from './chain.js';
import { initDiff } from './diff.js';
import { byId } from './dom.js';
import { initFix } from './fix.js';
import { cardOf, modelHash, restoreModel, sectionOf } from './modelurl.js';
import { initScan } from './scan.js';
import { onShow, setModelStatus, showView } from './views.js';

const model = { section: null, example: false };  // the model view's URL state (modelurl.js)
let diff;
let scan = { upload: async () => setModelStatus('The scan needs /v1/dialects, which did not answer.') };

function writeModelHash() {
  const hash = modelHash(model.section, model.example);
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

/** "Try the example model": the bundled app/clipbridge/static/example.onnx (a copy of docs/example.onnx), scanned and diffed. */
async function tryExample() {
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

/** A model-view link: its options filled, the view shown, its card in sight; the example model run again. */
export function openModelLink() {
  Object.assign(model, restoreModel(location.hash));
  showView('model-view');
  if (model.section) cardOf(model.section).scrollIntoView();
  if (model.example) tryExample();
  else setModelStatus('This link restores the view and its options; drop the model again (a link never carries one).');
}

/** The cards that need no dialect list (the diff, its Fix button, the chain) and the example button: wired even
 * when /v1/dialects fails (the example's scan then says so). */
export function initModelCards() {
  onShow('model-view', writeModelHash);
  diff = initDiff({ status: setModelStatus });
  initFix();
  initChain({ status: setModelStatus });
  byId('try-example').addEventListener('click', () => tryExample());
}

/** Once /v1/dialects answered: the scan (targets() and mode() are the spec view's; onOpen(spec) opens a clip's
 * spec there), and the view's URL following the card used. */
export function initModelLinks({ targets, mode, onOpen }) {
  for (const type of ['focusin', 'change', 'drop']) {
    byId('model-view').addEventListener(type, (event) => {
      const section = sectionOf(event.target);
      if (section) model.section = section;
      if (type === 'drop') model.example = false;  // the user's own model: a link cannot bring it back
      writeModelHash();
    }, true);
  }
  scan = initScan({ status: setModelStatus, targets, mode, onOpen });
}

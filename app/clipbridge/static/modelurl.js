// The model view's URL (issue 47): `#view=model`, the card last used (`section`: scan, diff, fix, chain) and
// the options of its cards, so that a link restores the view. A model never travels in a URL (it is the user's
// file, and may be large): a link asks for it again, or, with `example=1`, scans and diffs the bundled example
// model again, which restores the whole view. Decision written in docs/inspector.md.
// Imported by main.js (isModelHash) and modelview.js only.
import { byId } from './dom.js';

const CARDS = { scan: 'scan', diff: 'diff', fix: 'diff', chain: 'chain' };  // section -> the card that shows it
const VALUES = { precision: 'diff-precision', chain: 'chain-stages' };  // URL key -> the control it fills
const CHECKS = { static: 'chain-static' };

export const isModelHash = (hash) => new URLSearchParams(hash.slice(1)).get('view') === 'model';
export const cardOf = (section) => byId(CARDS[section] || 'scan');

/** The section a user event in the model view belongs to (a Fix button's events are the fix's), or null. */
export function sectionOf(target) {
  const card = target.closest ? target.closest('section.card') : null;
  if (!card || !CARDS[card.id]) return null;
  return card.id === 'diff' && target.closest('#fix-errors, .fix, [id^="fix"]') ? 'fix' : card.id;
}

/** The model view's hash: the section and every option's value (`example`: the example model is what ran). */
export function modelHash(section, example) {
  const params = new URLSearchParams({ view: 'model' });
  if (section) params.set('section', section);
  for (const [key, id] of Object.entries(VALUES)) params.set(key, byId(id).value);
  for (const [key, id] of Object.entries(CHECKS)) if (byId(id).checked) params.set(key, '1');
  if (example) params.set('example', '1');
  return `#${params}`;
}

/** Fill the options a model-view hash names; a value the page does not offer leaves the default. */
export function restoreModel(hash) {
  const params = new URLSearchParams(hash.slice(1));
  for (const [key, id] of Object.entries(VALUES)) {
    const value = params.get(key);
    const el = byId(id);
    if (value === null || (el.tagName === 'SELECT' && ![...el.options].some((o) => o.value === value))) continue;
    el.value = value;
  }
  for (const [key, id] of Object.entries(CHECKS)) byId(id).checked = params.get(key) === '1';
  const section = CARDS[params.get('section')] ? params.get('section') : null;
  return { section, example: params.get('example') === '1' };
}

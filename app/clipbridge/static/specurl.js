// The spec view's URL (the permalink): the spec, the translation mode, each target's version, and the targets
// when they are not the defaults, all in the fragment, so that a link restores the view. The model view's URL
// is modelurl.js. Imported by specview.js only.

import { parseJsonExact } from './numbers.js';

/** The fragment for the spec view's state {spec, mode, versions, targets}; defaults: the default targets. */
export function specHash(state, defaults) {
  const params = new URLSearchParams({ spec: JSON.stringify(state.spec), mode: state.mode });
  for (const d of state.targets) params.set(d, String(state.versions[d]));
  if (state.targets.join() !== defaults.join()) params.set('targets', state.targets.join(','));
  return `#${params}`;
}

/** A spec-view link read back: null when it has no spec, {error} when its spec is not a JSON object, else
 * {spec, mode, versions (the dialects it names), targets (null: the link keeps the current ones)}. */
export function readSpecHash(hash, dialects) {
  const params = new URLSearchParams(hash.slice(1));
  if (!params.has('spec')) return null;
  let spec;
  try {
    spec = parseJsonExact(params.get('spec'));
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new Error('not a JSON object');
  } catch (exc) {
    return { error: exc.message };
  }
  const versions = {};
  for (const d of dialects) if (params.get(d)) versions[d] = params.get(d);
  const targets = params.has('targets') ? params.get('targets').split(',').filter((d) => dialects.includes(d)) : null;
  return { spec, versions, targets, mode: params.get('mode') === 'literal' ? 'literal' : 'preserve' };
}

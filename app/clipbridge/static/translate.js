// The spec view's calls to the service: /v1/translate for the target panels and the meaning line, /v1/compare
// for the transfer plot, a failed translation's errors shown where they belong, and the editor's view-switch
// hooks (toCompact, toIr). Imported by specview.js only.

import { ApiError, api } from './api.js';
import { byId, fill, h } from './dom.js';
import { samplesFor } from './numbers.js';
import { clearPlot, renderPlot } from './plot.js';
import { meaningLabel } from './readings.js';
import { refLabel, targetRef } from './targets.js';
import { setStatus } from './views.js';

const COMPARE_MAX = 8; // CompareRequest.targets max_length
const plotEls = () => [byId('plot'), byId('plot-legend'), byId('plot-notes')];

function showMeaning(m) {
  const steps = [m.lower, m.upper].filter(Boolean).flatMap((b) => b.steps);
  const extra = [m.reason, ...m.readings].filter(Boolean);
  fill(byId('meaning'), h('span', { class: 'reading', text: `${meaningLabel(m)}: ` }), h('strong', { text: m.version }),
    ` · ${m.summary}`,
    steps.length ? h('span', { class: 'steps', text: ` (${steps.join('; ')})` }) : null,
    extra.length ? h('span', { class: 'steps', text: ` ${extra.join('; ')}` }) : null);
}

function showFailure(view, exc) {
  const errors = exc instanceof ApiError ? exc.errors : [];
  const detail = exc instanceof ApiError ? `${exc.problem.title || 'Error'}: ${exc.message}` : String(exc);
  const own = errors.filter((e) => !String(e.loc).startsWith('targets'));
  // Each message is shown once: a field error beside its field or in the list under the spec, a target's in its
  // panel, the detail (the service writes it from the same errors) only when there are none; the header says where.
  view.editor.showErrors(own, errors.length ? null : detail);
  view.panels.forEach((p, i) => {
    const mine = errors.filter((e) => String(e.loc).startsWith(`targets[${i}]`));
    p.error(mine.length ? mine.map((e) => `${e.loc}: ${e.msg}`).join('; ') : 'No translation: fix the source spec.');
  });
  byId('meaning').replaceChildren();
  clearPlot(...plotEls(), 'No plot: the spec has errors.');
  const where = own.length || !errors.length ? 'the source spec' : 'the translation panels';
  setStatus(`Error: not translated; the problem is shown with ${where}.`);
}

/** Translates view.state's spec into its panels' targets and plots it. view: {state, panels, editor, seq}; seq
 * numbers the updates, and an answer to any but the last one is dropped. */
export async function update(view) {
  const { state } = view;
  const my = ++view.seq;
  const spec = state.spec;
  const targets = view.panels.map((p) => targetRef(p.dialect, state.versions[p.dialect]));
  const mode = state.mode;
  view.panels.forEach((p) => p.busy());
  setStatus('Translating…');
  let res;
  try {
    res = await api('/v1/translate', { json: { spec, targets, mode } });
  } catch (exc) {
    if (my === view.seq) showFailure(view, exc);
    return;
  }
  if (my !== view.seq) return;
  state.last = res;
  state.lastKey = JSON.stringify(spec);
  view.editor.showErrors([]);
  showMeaning(res.meaning);
  const ctx = { source: spec, mode, dtype: res.meaning.dtype };
  res.translations.forEach((t, i) => view.panels[i].show(t, ctx, targets[i]));
  byId('targets').dataset.spec = state.lastKey; // which spec the panels show (tools and tests wait on it)
  const counts = res.translations.map((t, i) => `${refLabel(targets[i])} ${t.status}`).join(', ');
  setStatus(`Translated (${mode}): ${counts}`);
  await updatePlot(view, res, spec, targets, mode, my);
}

async function updatePlot(view, res, spec, targets, mode, my) {
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
    if (my === view.seq) renderPlot(...plotEls(), sample, outputs);
  } catch (exc) {
    if (my === view.seq) clearPlot(...plotEls(), `No plot: ${exc.message}`);
  }
}

// --- hooks for the editor's view switches ------------------------------------------------------------

/** The compact form of a spec (a model or an IR's clip), or null. */
export async function toCompact(spec) {
  try {
    return (await api('/v1/translate', { json: { spec, targets: [spec.dialect] } })).source;
  } catch {
    return null;
  }
}

/** A spec as OpenVINO IR XML at the given OpenVINO version, or null. */
export async function toIr(spec, version) {
  try {
    const res = await api('/v1/translate', { json: { spec, targets: [targetRef('openvino', version)] } });
    return res.translations[0].artifacts.ir_xml;
  } catch {
    return null;
  }
}

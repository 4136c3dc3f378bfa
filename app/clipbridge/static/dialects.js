// The registered dialects, read once from /v1/dialects: each one's target versions (the panels' selectors), its
// default target, its editor capabilities (dtypes, versions, spec schema), its examples and its starting spec, and
// which dialects are the default targets. A dialect added to the registry appears in the page by itself.
// Imported by main.js only (which hands the result to specview.js).

import { api } from './api.js';
import { VERSION_KEY, registerDialects } from './targets.js';

// The example a dialect starts from (its first example when it has none of this name): docs/inspector.md.
const START = 'start';

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

/** The page's capabilities: {editor, targets, defaults, examples, templates} per dialect, and `dialects` (every
 * registered dialect, in registry order) and `defaultTargets` (those in_defaults). */
export async function loadCaps() {
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
  out.dialects = res.dialects.map((d) => d.dialect);
  out.defaultTargets = res.dialects.filter((d) => d.in_defaults !== false).map((d) => d.dialect);
  return out;
}

// The source spec editor: a form with the fields of the spec's dialect, raw JSON, or OpenVINO IR XML.
// The spec object is the truth; each view edits it and calls onChange(spec). Field errors from the API
// (problem+json `errors: [{loc, msg}]`) are shown next to the field their loc names.

import { byId, h } from './dom.js';
import { fromField, parseJsonExact, toField, wireInt } from './numbers.js';

const num = (label, path, hint) => ({ kind: 'number', label, paths: [path], hint });

const OPTIONAL = 'empty: not given (the default applies)';

/** A JSON Schema node with one `$ref` into the spec schema's `$defs` followed. */
function deref(node, schema) {
  const ref = node && node.$ref;
  return ref ? (schema.$defs || {})[ref.split('/').pop()] || {} : node || {};
}

/** The alternatives of a schema node (anyOf / oneOf, nested ones flattened, else the node itself). */
function alternatives(node, schema) {
  const n = deref(node, schema);
  const alts = n.anyOf || n.oneOf;
  return alts ? alts.flatMap((a) => alternatives(a, schema)) : [n];
}

/** One form field for a top-level property of a spec's JSON Schema (null: edited as JSON only). */
function schemaField(name, node, required, dtypes) {
  const alts = alternatives(node.prop, node.schema);
  const types = new Set(alts.map((a) => a.type));
  const enums = alts.flatMap((a) => a.enum || (a.const !== undefined ? [a.const] : []));
  const hint = required ? 'required' : OPTIONAL;
  const path = [name];
  if (enums.length && !types.has('number')) {
    return { kind: 'select', label: name, paths: path, options: [...(required ? [] : ['']), ...enums.map(String)], hint };
  }
  if (types.has('number')) return { kind: 'number', label: name, paths: path, hint };
  if (types.has('integer')) return { kind: 'int', label: name, paths: path, hint };
  const arr = alts.find((a) => a.type === 'array');
  if (arr) {
    const items = alternatives(arr.items, node.schema);
    const dims = items.some((i) => i.type === 'null' || i.type === 'string');
    return { kind: dims ? 'dims' : 'ints', label: name, paths: path,
      hint: dims ? 'comma-separated; ? or a name for a dynamic dim; empty: unknown' : `comma-separated; ${hint}` };
  }
  if (types.has('string')) {
    // The element type field offers the dialect's dtypes (from its capability rows).
    if (/type$/i.test(name) && dtypes.length) {
      return { kind: 'select', label: name, paths: path, options: [...(required ? [] : ['']), ...dtypes], hint };
    }
    return { kind: 'text', label: name, paths: path, hint };
  }
  return null; // an object or anything else: the JSON view edits it
}

/** The form of a dialect without a hand-made one: its spec model's JSON Schema, property by property. */
function schemaFields(dialect, caps) {
  const schema = caps[dialect].schema || {};
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties || {})
    .filter(([name]) => name !== 'dialect')
    .map(([name, prop]) => schemaField(name, { prop, schema }, required.has(name), caps[dialect].dtypes))
    .filter(Boolean);
}

/** A spec the schema form can show: each of its keys is a field, holding a value of the field's kind (a tensor
 * bound or a nested object is edited as JSON). Hand-made forms take any compact spec of their dialect. */
function fitsForm(spec, caps) {
  if (HAND_FORMS[spec.dialect]) return true;
  const fields = new Map(schemaFields(spec.dialect, caps).map((f) => [f.paths[0], f]));
  return Object.entries(spec).every(([key, value]) => key === 'dialect' || (fields.has(key) && (
    value === null || typeof value !== 'object' || (Array.isArray(value) && /^(dims|ints)$/.test(fields.get(key).kind)
      && value.every((v) => v === null || typeof v !== 'object')))));
}

/** Hand-made forms where a dialect's spec is nested or one field writes several paths. */
const HAND_FORMS = { onnx: onnxFields, openvino: openvinoFields, directml: directmlFields };

/** Form fields per dialect. `paths` are dotted paths in the spec; the first is read, all are written. */
function fieldsFor(dialect, caps) {
  return (HAND_FORMS[dialect] || schemaFields)(dialect, caps);
}

function onnxFields(dialect, caps) {
  const dtypes = caps[dialect].dtypes;
  const optional = OPTIONAL;
  return [
    { kind: 'int', label: 'Opset', paths: ['opset'], hint: 'any opset; resolves to Clip-1, -6, -11, -12 or -13' },
    { kind: 'select', label: 'elem_type', paths: ['elem_type'], options: dtypes },
    { kind: 'dims', label: 'Shape', paths: ['shape'], hint: 'comma-separated; ? or a name for a dynamic dim; empty: unknown' },
    num('min', 'min', optional),
    num('max', 'max', optional),
  ];
}

/** A top-level field's default in a dialect's spec schema (/v1/dialects spec_schema), as the select's text. */
function schemaDefault(schema, key) {
  const p = schema && schema.properties && schema.properties[key];
  return p && p.default !== undefined && p.default !== null ? String(p.default) : undefined;
}

function openvinoFields(dialect, caps) {
  const dtypes = caps[dialect].dtypes;
  return [
    { kind: 'select', label: 'Version', paths: ['version'], options: caps.openvino.versions },
    { kind: 'select', label: 'element_type', paths: ['element_type'], options: dtypes },
    { kind: 'dims', label: 'Shape', paths: ['shape'], hint: 'comma-separated; ? or a name for a dynamic dim; empty: unknown' },
    num('min', 'min', 'a double attribute; required'),
    num('max', 'max', 'a double attribute; required'),
  ];
}

function directmlFields(dialect, caps) {
  const dtypes = caps[dialect].dtypes;
  return [
    { kind: 'select', label: 'Feature level', paths: ['feature_level'], options: caps.directml.versions },
    { kind: 'select', label: 'Operator', paths: ['operator'], options: ['ELEMENT_WISE_CLIP', 'ELEMENT_WISE_CLIP1'] },
    { kind: 'select', label: 'DataType', paths: ['desc.InputTensor.DataType', 'desc.OutputTensor.DataType'], options: dtypes,
      hint: 'input and output tensor' },
    { kind: 'ints', label: 'Sizes', paths: ['desc.InputTensor.Sizes', 'desc.OutputTensor.Sizes'], hint: 'comma-separated' },
    { kind: 'ints', label: 'Strides', paths: ['desc.InputTensor.Strides'], hint: 'input tensor; empty: packed' },
    { kind: 'select', label: 'MinMaxDataType', paths: ['desc.MinMaxDataType'], options: ['', ...dtypes],
      hint: 'ELEMENT_WISE_CLIP1 only; empty: not given' },
    num('ScaleBias Scale', 'desc.ScaleBias.Scale', 'empty Scale and Bias: no ScaleBias'),
    num('ScaleBias Bias', 'desc.ScaleBias.Bias'),
    num('Min', 'desc.Min', 'FLOAT for CLIP; typed for CLIP1'),
    num('Max', 'desc.Max'),
  ];
}

function getPath(obj, path) {
  return path.split('.').reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), obj);
}

/** Set (or, for undefined, delete) a dotted path, dropping objects the deletion leaves empty. */
function setPath(obj, path, value) {
  const keys = path.split('.');
  const chain = [obj];
  for (const k of keys.slice(0, -1)) {
    const cur = chain[chain.length - 1];
    if (value === undefined && (cur[k] === undefined || cur[k] === null)) return;
    if (cur[k] === undefined || cur[k] === null || typeof cur[k] !== 'object') cur[k] = {};
    chain.push(cur[k]);
  }
  const last = keys[keys.length - 1];
  if (value !== undefined) {
    chain[chain.length - 1][last] = value;
    return;
  }
  delete chain[chain.length - 1][last];
  for (let i = chain.length - 1; i > 0; i--) {
    if (Object.keys(chain[i]).length) break;
    delete chain[i - 1][keys[i - 1]];
  }
}

function parseList(text, dims) {
  let t = text.trim();
  if (t === '') return undefined;
  t = t.replace(/^\[/, '').replace(/\]$/, '').trim();
  if (t === '') return [];
  return t.split(',').map((part) => {
    const p = part.trim();
    if (/^\d+$/.test(p)) return wireInt(p);
    if (dims && (p === '?' || p === 'null' || p === '')) return null;
    return p; // a symbolic dim, or something the service will name as wrong
  });
}

function showList(value) {
  if (!Array.isArray(value)) return toField(value);
  return value.map((d) => (d === null ? '?' : String(d))).join(', ');
}

function readField(field, el) {
  const v = el.value;
  switch (field.kind) {
    case 'int': return v.trim() === '' ? undefined : (/^\d+$/.test(v.trim()) ? Number(v) : v.trim());
    case 'select': return v === '' ? undefined : v;
    case 'dims': return parseList(v, true);
    case 'ints': return parseList(v, false);
    case 'text': return v.trim() === '' ? undefined : v.trim();
    default: return fromField(v);
  }
}

/** caps: every registered dialect (from /v1/dialects), so a new one is known here without a line of its own. */
let known = () => false;
let fits = () => false;
/** The form shows compact specs of a known dialect; a model, an IR or anything else is edited as text. */
const formable = (spec) => known(spec.dialect) && spec.model === undefined && spec.ir_xml === undefined && fits(spec);
const fieldId = (path) => `f-${path.replace(/[^A-Za-z0-9]+/g, '-')}`;
const stripLoc = (loc) => String(loc).replace(/^(source|spec)(\.|$)/, '');

export class SourceEditor {
  /**
   * caps: {dialect: {dtypes, versions, schema}} for every registered dialect; onChange(spec) after each edit.
   * hooks: toCompact(spec) -> compact spec or null; toIr(spec) -> IR XML text or null.
   */
  constructor(caps, onChange, hooks) {
    this.caps = caps;
    known = (dialect) => Object.hasOwn(caps, dialect);
    fits = (spec) => fitsForm(spec, caps);
    this.onChange = onChange;
    this.hooks = hooks;
    this.spec = null;
    this.view = 'form';
    this.rows = [];
    this.form = byId('spec-form');
    this.json = byId('spec-json');
    this.xml = byId('spec-xml');
    this.layer = byId('spec-layer');
    this.errors = byId('source-errors');
    this.form.addEventListener('input', () => this.readForm());
    this.form.addEventListener('change', () => this.readForm());
    this.form.addEventListener('submit', (event) => event.preventDefault());
    this.json.addEventListener('input', () => this.readJson());
    this.xml.addEventListener('input', () => this.readXml());
    this.layer.addEventListener('input', () => this.readXml());
    for (const radio of document.querySelectorAll('input[name="edit-as"]')) {
      radio.addEventListener('change', () => radio.checked && this.switchView(radio.value));
    }
  }

  /** Show a new spec (an example, a permalink, a dialect switch). */
  set(spec) {
    this.spec = spec;
    if (known(spec.dialect)) byId('dialect').value = spec.dialect;
    if (spec.ir_xml !== undefined) this.view = 'xml';
    else if (this.view === 'xml' || (this.view === 'form' && !formable(spec))) this.view = 'json';
    this.render();
  }

  render() {
    const isOv = this.spec.dialect === 'openvino';
    for (const radio of document.querySelectorAll('input[name="edit-as"]')) {
      radio.checked = radio.value === this.view;
      if (radio.value === 'xml') radio.disabled = !isOv;
    }
    this.form.hidden = this.view !== 'form';
    byId('json-editor').hidden = this.view !== 'json';
    byId('xml-editor').hidden = this.view !== 'xml';
    if (this.view === 'form') this.renderForm();
    if (this.view === 'json') {
      this.json.value = JSON.stringify(this.spec, null, 2);
      this.json.removeAttribute('aria-invalid');
    }
    if (this.view === 'xml') {
      this.xml.value = this.spec.ir_xml || '';
      this.layer.value = toField(this.spec.layer);
    }
  }

  renderForm() {
    const fields = fieldsFor(this.spec.dialect, this.caps);
    const filled = [];
    this.rows = fields.map((field) => {
      const id = fieldId(field.paths[0]);
      let value = getPath(this.spec, field.paths[0]);
      if (value === undefined && field.kind === 'select' && !field.options.includes('')) {
        // A link or spec that leaves out a field with no "(not given)" choice (OpenVINO's version): the select
        // shows what the API assumes for it, the schema's default, and the spec is written with it (issue 47).
        value = schemaDefault(this.caps[this.spec.dialect].schema, field.paths[0]) ?? field.options[0];
        filled.push(field);
      }
      let el;
      if (field.kind === 'select') {
        const options = [...field.options];
        if (value !== undefined && !options.includes(String(value))) options.push(String(value));
        el = h('select', { id, name: field.paths[0] },
          options.map((o) => h('option', { value: o, text: o === '' ? '(not given)' : o })));
        el.value = value === undefined ? '' : String(value);
      } else {
        el = h('input', { id, name: field.paths[0], type: field.kind === 'int' ? 'number' : 'text',
          min: field.kind === 'int' ? 1 : null, autocomplete: 'off', spellcheck: 'false' });
        el.value = field.kind === 'dims' || field.kind === 'ints' ? showList(value) : toField(value);
      }
      const err = h('span', { id: `${id}-err`, class: 'field-error' });
      const hint = field.hint ? h('small', { id: `${id}-hint`, class: 'hint', text: field.hint }) : null;
      el.setAttribute('aria-describedby', [hint && hint.id, err.id].filter(Boolean).join(' '));
      if (field.hint) el.title = field.hint;  // a phone hides the hint line (inspector.css): kept as the title
      const box = h('div', { class: 'field' }, h('label', { for: id, text: field.label }), el, hint, err);
      return { field, el, err, box };
    });
    this.form.replaceChildren(...this.rows.map((r) => r.box));
    if (filled.length) this.readForm();  // the spec, and so the permalink, now names the defaults it showed
  }

  readForm() {
    const spec = JSON.parse(JSON.stringify(this.spec));
    for (const { field, el } of this.rows) {
      const value = readField(field, el);
      for (const path of field.paths) setPath(spec, path, value);
    }
    this.spec = spec;
    this.onChange(spec);
  }

  readJson() {
    let spec;
    try {
      spec = parseJsonExact(this.json.value);
      if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new Error('the spec must be a JSON object');
    } catch (exc) {
      this.json.setAttribute('aria-invalid', 'true');
      this.showErrors([], `JSON: ${exc.message}`);
      return;
    }
    this.json.removeAttribute('aria-invalid');
    this.spec = spec;
    if (known(spec.dialect)) byId('dialect').value = spec.dialect;
    this.onChange(spec);
  }

  readXml() {
    const spec = { dialect: 'openvino', ir_xml: this.xml.value };
    const layer = this.layer.value.trim();
    if (layer !== '') spec.layer = /^\d+$/.test(layer) ? Number(layer) : layer;
    this.spec = spec;
    this.onChange(spec);
  }

  async switchView(view) {
    let spec = this.spec;
    if (view === 'form' && !formable(spec)) {
      spec = (known(spec.dialect) && (await this.hooks.toCompact(spec))) || spec;
      if (!formable(spec)) {
        this.showErrors([], `The form edits compact specs of ${Object.keys(this.caps).join(', ')} whose fields it has `
          + '(a model, an IR, a tensor bound or a nested field is edited as JSON); fix the spec first.');
        this.render();
        return;
      }
    }
    if (view === 'xml' && spec.ir_xml === undefined) {
      const xml = await this.hooks.toIr(spec);
      spec = { dialect: 'openvino', ir_xml: xml || '' };
    }
    this.view = view;
    const changed = spec !== this.spec;
    this.spec = spec;
    this.render();
    if (changed) this.onChange(spec);
  }

  /** Field errors next to their fields; the rest (and a detail without errors) in the list below. */
  showErrors(errors, detail) {
    for (const row of this.rows) {
      row.err.textContent = '';
      row.el.removeAttribute('aria-invalid');
    }
    const rest = [];
    for (const e of errors) {
      const loc = stripLoc(e.loc);
      const row = this.view === 'form' && this.rows.find(({ field }) => field.paths.some(
        (p) => loc === p || loc.startsWith(`${p}[`) || loc.startsWith(`${p}.`)));
      if (row) {
        row.err.textContent = row.err.textContent ? `${row.err.textContent}; ${e.msg}` : e.msg;
        row.el.setAttribute('aria-invalid', 'true');
      } else rest.push(e);
    }
    const items = rest.map((e) => h('li', {}, h('code', { text: e.loc }), ' ', e.msg));
    if (detail && !errors.length) items.push(h('li', { text: detail }));
    this.errors.replaceChildren(...(items.length ? [h('ul', {}, items)] : []));
  }
}

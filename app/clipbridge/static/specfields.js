// The source editor's form fields: a dialect's fields from its spec model's JSON Schema, or a hand-made form
// (ONNX, OpenVINO, DirectML: nested specs, or one field that writes several paths); whether a spec fits the form;
// the dotted paths the fields read and write; each field's text to and from its value.
// Imported by editor.js only.

import { fromField, toField, wireInt } from './numbers.js';

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
export function fitsForm(spec, caps) {
  if (HAND_FORMS[spec.dialect]) return true;
  const fields = new Map(schemaFields(spec.dialect, caps).map((f) => [f.paths[0], f]));
  return Object.entries(spec).every(([key, value]) => key === 'dialect' || (fields.has(key) && (
    value === null || typeof value !== 'object' || (Array.isArray(value) && /^(dims|ints)$/.test(fields.get(key).kind)
      && value.every((v) => v === null || typeof v !== 'object')))));
}

/** Hand-made forms where a dialect's spec is nested or one field writes several paths. */
const HAND_FORMS = { onnx: onnxFields, openvino: openvinoFields, directml: directmlFields };

/** Form fields per dialect. `paths` are dotted paths in the spec; the first is read, all are written. */
export function fieldsFor(dialect, caps) {
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
export function schemaDefault(schema, key) {
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

export function getPath(obj, path) {
  return path.split('.').reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), obj);
}

/** Set (or, for undefined, delete) a dotted path, dropping objects the deletion leaves empty. */
export function setPath(obj, path, value) {
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

export function showList(value) {
  if (!Array.isArray(value)) return toField(value);
  return value.map((d) => (d === null ? '?' : String(d))).join(', ');
}

export function readField(field, el) {
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

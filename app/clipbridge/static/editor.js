// The source spec editor: a form with the fields of the spec's dialect (specfields.js), raw JSON, or OpenVINO IR
// XML. The spec object is the truth; each view edits it and calls onChange(spec). Field errors from the API
// (problem+json `errors: [{loc, msg}]`) are shown next to the field their loc names.
// Imported by specview.js only.

import { byId, h } from './dom.js';
import { parseJsonExact, toField } from './numbers.js';
import { fieldsFor, fitsForm, getPath, readField, schemaDefault, setPath, showList } from './specfields.js';

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

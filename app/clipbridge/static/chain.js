// "Follow across converters": a torch.export .pt2 or an .onnx (and optionally an .npz of its inputs) goes to
// /v1/models/chain; the answer is drawn as the CLI's table (app/clipbridge/chain/formats.py), the chain as columns: the
// source op, then per hop what the converter wrote for it, whether it differs from the source (`=` or a count),
// the converter lowering rule that caused it, and the predictions that the run confirmed. A click on a cell shows
// its witness (docs/chain.md, docs/inspector.md).
// Imported by modelview.js only.

import { ApiError, api, showProblem } from './api.js';
import { byId, fill, h, wireDropZone } from './dom.js';
import { witnessText } from './diff.js';
import { observedLabel } from './readings.js';

// The chain a model starts with: a .pt2 starts at torch, an ONNX model at onnx (and may only go to openvino).
const PREFILL = { torch: 'torch,onnx,openvino', onnx: 'onnx,openvino' };
const kindOf = (file) => (/\.onnx$/i.test(file.name) ? 'onnx' : 'torch');
const dash = '—';

/** A verdict or hop status as a badge: equal green, explained dark, unexplained or failed red, the rest grey. */
function stateBadge(state) {
  const tone = { equal: 'badge-exact', explained: 'badge-cause', unexplained: 'badge-cause badge-bad',
    failed: 'badge-cause badge-bad' }[state] || '';
  return h('span', { class: `badge ${tone}`, text: state });
}

function causeBadge(cause) {
  const bad = cause === 'unexplained' || cause === 'not-a-clip';
  return h('span', { class: `badge badge-cause${bad ? ' badge-bad' : ''}`, text: cause });
}

/** What one hop says about one source op: its lowering row, its comparison against the source and the previous
 * stage, and each prediction with whether the run confirmed it. */
function hopCell(hop, node) {
  const row = (hop.lowering || []).find((r) => r.node === node) || null;
  const find = (cmp) => (cmp ? (cmp.nodes || []).find((n) => n.node === node) || null : null);
  const confirmed = new Set((hop.confirmed || []).filter((p) => p.node === node).map((p) => p.rule));
  const ran = 'confirmed' in hop;
  const predicted = (hop.predicted || []).filter((p) => p.node === node)
    .map((p) => ({ rule: p.rule, state: confirmed.has(p.rule) ? 'confirmed' : ran ? 'not reached' : 'predicted' }));
  const became = row && row.became ? row.became : (hop.status === 'ok' || hop.status === 'static') ? 'unpaired' : dash;
  return { hop, node, row, became, source: find(hop.against_source), previous: find(hop.against_previous), predicted };
}

/** A hop's verdict against the source; a hop that converted but was not compared (static only) is `converted`. */
function hopState(hop) {
  if (hop.against_source) return hop.against_source.verdict;
  return hop.status === 'ok' && !('against_source' in hop) ? 'converted' : hop.status;
}

function cellLabel(hop) {
  return `${hop.to} (${hopState(hop)})`;
}

function cellBody(c) {
  const n = c.source;
  const diff = !n || n.differing === null || n.differing === undefined ? null
    : n.differing ? h('span', { class: 'chain-differs', text: `${n.differing}/${n.total}` })
      : h('span', { class: 'chain-equal', title: 'equal to the source', text: '=' });
  const marks = c.predicted.map((p) => h('span', { class: `mark mark-${p.state.replace(' ', '-')}`,
    title: `${p.state}: ${p.rule}`, text: `${p.state === 'confirmed' ? '✓' : '?'} ${p.rule}` }));
  const differs = Boolean(n && n.differing);
  return [h('code', { class: 'chain-became', text: c.became }), diff ? ' ' : null, diff,
    differs ? ' ' : null, differs ? causeBadge(n.cause || 'unexplained') : null,
    differs && n.origin === 'inherited' ? h('small', { class: 'cell-note', text: ' inherited' }) : null,
    marks.length ? h('span', { class: 'marks' }, marks) : null];
}

function comparisonLines(label, n) {
  if (!n) return [];
  const text = n.differing === null || n.differing === undefined ? 'not compared'
    : n.differing ? `${n.differing} of ${n.total} elements differ (${n.origin || 'origin unknown'})` : 'equal';
  return [[label, text]];
}

/** The detail of one cell: what the op became and how it was paired, its differences, cause and witness. */
function cellDetail(c, body) {
  const { hop, row } = c;
  const n = c.source;
  const ref = hop.against_source ? hop.against_source.reference || body.source : body.source;
  const dl = [['Became', c.became], ...(row && row.pairing ? [['Paired by', row.pairing]] : []),
    ...comparisonLines(`Against ${ref}`, n),
    ...(c.previous && hop.from !== body.source ? comparisonLines(`Against ${hop.from}`, c.previous) : []),
    ...c.predicted.map((p) => ['Prediction', `${p.rule} (${p.state})`])];
  if (hop.status !== 'ok') dl.push(['Hop', hop.error || hop.note || hop.status]);
  const cause = n && n.differing ? n.cause || 'unexplained' : null;
  const witness = (n && n.witness) || (c.previous && c.previous.witness) || null;
  const engines = witness ? Object.keys(witness.outputs || {}) : [];
  return [
    h('h4', {}, h('code', { text: c.node }), ` on ${hop.to} (from ${hop.from})`),
    cause ? h('p', { class: 'detail-cause' }, 'Cause: ', causeBadge(cause),
      body.rules && body.rules[cause] ? h('small', { class: 'reading', text: ` ${body.rules[cause]}` }) : null) : null,
    h('dl', { class: 'behaviours' }, dl.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: String(v) })])),
    witness ? h('p', { class: 'detail-witness' }, h('strong', { text: 'Witness ' }),
      h('span', { class: 'reading', text: `(${observedLabel(engines)})` }), ': ',
      h('code', { text: witnessText(witness) }))
      : h('p', { class: 'none', text: hop.against_source ? 'No witness: this op does not differ on this hop.'
        : 'No witness: this hop did not run.' }),
  ];
}

function hopHead(hop) {
  const fd = hop.against_source ? hop.against_source.first_divergence : null;
  return h('th', { scope: 'col', 'data-hop': hop.to }, h('span', { class: 'chain-hop' }, hop.to), ' ',
    stateBadge(hopState(hop)),
    fd ? h('small', { class: 'chain-first' }, h('br'), 'first: ', h('code', { text: fd.node }), ` (${fd.at})`) : null);
}

function table(body, detail) {
  const hops = body.hops;
  const cell = (label, props, ...kids) => h('td', { 'data-label': label, ...props }, ...kids);
  const show = (c, button) => {
    fill(detail, ...cellDetail(c, body));
    detail.hidden = false;
    for (const b of button.closest('table').querySelectorAll('.chain-cell[aria-pressed="true"]')) {
      b.setAttribute('aria-pressed', 'false');
    }
    button.setAttribute('aria-pressed', 'true');
    detail.scrollIntoView({ block: 'nearest' });
  };
  const rows = body.clips.map((clip) => h('tr', { class: 'chain-row', 'data-node': clip.node },
    cell('Source op', {}, h('code', { text: clip.node }), ` [${clip.op}]`),
    hops.map((hop) => {
      const c = hopCell(hop, clip.node);
      const differs = c.source && c.source.differing;
      const button = h('button', { type: 'button', class: 'chain-cell', 'aria-pressed': 'false',
        'aria-label': `${clip.node} on ${hop.to}: show its witness`, onclick: () => show(c, button) }, cellBody(c));
      return cell(cellLabel(hop), { 'data-hop': hop.to, class: differs ? 'chain-differ' : null }, button);
    })));
  const outputs = (hop) => (hop.against_source ? hop.against_source.outputs.map((o) => `${o.differing}/${o.total}`)
    .join(', ') : hop.status === 'ok' ? dash : hop.status);
  const first = (hop) => {
    const fd = hop.against_source ? hop.against_source.first_divergence : null;
    return fd ? `${fd.node} (${fd.at})` : dash;
  };
  const summary = (name, fn) => h('tr', { class: 'chain-summary' }, cell('', { class: 'open-cell', text: name }),
    hops.map((hop) => cell(cellLabel(hop), { 'data-hop': hop.to, text: fn(hop) })));
  const head = h('tr', {}, h('th', { scope: 'col', text: 'Source op' }), hops.map(hopHead));
  // a static answer ran nothing: no outputs to count, no divergence
  const ran = !body.static;
  return h('table', { class: 'diff-table chain-table cards' }, h('thead', {}, head),
    h('tbody', {}, rows, ran ? [summary('Outputs differing', outputs), summary('First divergence', first)] : null));
}

/** A failed or not-installed hop, and a hop's note (Core ML static, tflite:builtin): under the table. */
function hopNotes(body) {
  return body.hops.flatMap((hop) => {
    const out = [];
    if (hop.error) {
      const command = (hop.error.match(/pip install[^;()]*|clipbridge chain-env build/) || [null])[0];
      // the install command, when the error names one, set as code in its place
      const at = command ? hop.error.indexOf(command) : -1;
      const text = at < 0 ? [hop.error] : [hop.error.slice(0, at), h('code', { text: command.trim() }),
        hop.error.slice(at + command.length)];
      out.push(h('p', { class: `chain-hop-error${command ? ' install-hint' : ''}`, role: 'note', 'data-hop': hop.to },
        h('strong', { text: `${hop.to} ${hop.status}: ` }), text,
        hop.cause ? h('span', {}, ' (predicted: ', causeBadge(hop.cause.rule), ')') : null));
    }
    if (hop.note) out.push(h('p', { class: 'hint', text: `${hop.to}: ${hop.note}` }));
    if ('confirmed' in hop) {
      out.push(h('p', { class: 'hint', text: `${hop.to}: predicted ${hop.predicted.length}, confirmed `
        + `${hop.confirmed.length}, not reached ${hop.not_reached.length}, unpredicted ${hop.unpredicted.length}` }));
    }
    return out;
  });
}

function report(body, fileName) {
  const detail = h('div', { id: 'chain-detail', class: 'graph-detail chain-detail', 'aria-live': 'polite',
    hidden: true });
  const inputs = body.inputs.source === 'given' ? 'given (.npz)' : `generated, seed ${body.inputs.seed}`;
  return [
    h('p', { class: 'scan-file', text: fileName }),
    h('p', { class: 'chain-verdict' }, `Chain ${body.chain.join(' → ')}: `, h('strong', { text: body.static ? 'static' : body.verdict })),
    h('p', { class: 'reading-note' }, h('strong', { text: 'Reading: ' }), body.static
      ? 'the converted graphs as read, nothing ran; a "?" mark is a prediction of clipbridge\'s meanings.'
      : 'observed engines — each converted model as its engine ran it, against the source; ✓ marks a '
        + 'prediction the run confirmed.'),
    body.static ? null : h('p', { text: `Inputs: ${inputs}.` }),
    body.clips.length ? table(body, detail) : h('p', { class: 'none', text: 'The source has no clip-like op.' }),
    detail,
    ...hopNotes(body),
  ];
}

/** A stage whose converter is missing: the 422 names the command; shown as an install hint, the problem below. */
function installCommand(exc) {
  if (!(exc instanceof ApiError)) return null;
  const text = [exc.message, ...exc.errors.map((e) => e.msg)].join(' ');
  const m = text.match(/pip install -e "\.\[[a-z]+\]"|pip install [^;()]+|clipbridge chain-env build/);
  return m ? m[0].trim() : null;
}

/** Wires the chain panel of the model view. status(text) sets the model view's header line. */
export function initChain({ status = () => {} } = {}) {
  const zone = byId('chain-dropzone');
  if (!zone) return { upload: async () => {} };
  const input = byId('chain-file');
  const stages = byId('chain-stages');
  const run = byId('chain-run');
  const out = byId('chain-out');
  const errors = byId('chain-errors');
  let held = null;

  async function post() {
    const { model, inputs } = held;
    const form = new FormData();
    form.append('model', model, model.name);
    if (inputs) form.append('inputs', inputs, inputs.name);
    const query = new URLSearchParams([['chain', stages.value.trim()]]);
    if (byId('chain-static').checked) query.set('static', 'true');
    errors.replaceChildren();
    out.replaceChildren(h('p', { text: `Converting ${model.name} along ${stages.value.trim()}…` }));
    status(`Following ${model.name} across converters…`);
    run.disabled = true;
    try {
      const body = await api('/v1/models/chain', { body: form, query });
      fill(out, ...report(body, model.name));
      status(`Chain of ${model.name}: ${body.static ? 'static' : body.verdict}`);
    } catch (exc) {
      out.replaceChildren();
      showProblem(errors, exc);
      const command = installCommand(exc);
      if (command) errors.append(h('p', { class: 'install-hint', role: 'note' },
        h('strong', { text: 'A converter is missing. ' }), 'Install it with ', h('code', { text: command }),
        ', or leave its stage out of the chain.'));
      status(`Chain of ${model.name} failed`);
    } finally {
      run.disabled = false;
    }
  }

  async function upload(files) {
    const list = [...files];
    const model = list.find((f) => /\.(pt2|onnx)$/i.test(f.name)) || list.find((f) => !/\.npz$/i.test(f.name));
    errors.replaceChildren();
    if (!model) {
      errors.textContent = 'Choose a .pt2 (torch.export.save) or an .onnx model, and optionally an .npz of its inputs.';
      return;
    }
    held = { model, inputs: list.find((f) => /\.npz$/i.test(f.name)) || null };
    // The prefilled chain follows the model's kind; a chain the user typed stays as typed.
    if (Object.values(PREFILL).includes(stages.value.trim())) stages.value = PREFILL[kindOf(model)];
    await post();
  }

  run.addEventListener('click', () => {
    if (held) post();
    else errors.textContent = 'Choose a model first.';
  });
  wireDropZone(zone, input, upload);
  return { upload };
}

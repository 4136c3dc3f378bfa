// Small DOM helpers. Text always goes in through textContent / text nodes, never parsed as HTML.
// Imported by any module here (a leaf: it imports nothing).

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(el, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') el.textContent = String(value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** h('button', {class: 'x', onclick: f}, 'label', otherNode) */
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

/** The same for SVG elements. */
export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

/** Replace an element's children; null, undefined and false are left out (replaceChildren would print them). */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return el;
}

export function byId(id) {
  return document.getElementById(id);
}

/** Save text or bytes as a file (a blob link clicked once). */
export function download(name, data, type) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** Copy text to the clipboard; falls back to a selected textarea where the Clipboard API is missing. */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // fall through to the selection copy
    }
  }
  const area = h('textarea', { class: 'offscreen', readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  return ok;
}

/** base64 -> bytes */
export function fromBase64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Sends the files chosen in `input` or dropped on `zone` to upload(files) (the scan and diff drop zones). */
export function wireDropZone(zone, input, upload) {
  input.addEventListener('change', async () => {
    if (!input.files.length) return;
    await upload(input.files);
    input.value = ''; // the same file again is a new upload
  });
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    if (event.dataTransfer && event.dataTransfer.files.length) upload(event.dataTransfer.files);
  });
}

/** A deep copy of a spec (specs are plain JSON). */
export const copy = (spec) => JSON.parse(JSON.stringify(spec));

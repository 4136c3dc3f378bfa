// Calls to the clipbridge API: JSON in and out, problem+json errors as ApiError, the API key on request.
//
// When the service answers 401 (CLIPBRIDGE_API_KEY is set), the key dialog asks once, the key is kept in
// sessionStorage and sent as X-API-Key on every /v1 request after that. Concurrent 401s share one dialog.
// Imported by any module here that calls the service (a leaf: it imports only dom.js).

import { byId, h } from './dom.js';

const KEY_STORE = 'clipbridge.apiKey';
let pendingKey = null;

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.errors = Array.isArray(problem.errors) ? problem.errors : [];
  }
}

function askKey(reason) {
  if (pendingKey) return pendingKey;
  const dialog = byId('key-dialog');
  const form = byId('key-form');
  const input = byId('api-key');
  byId('key-why').textContent = reason;
  input.value = '';
  pendingKey = new Promise((resolve) => {
    const done = (key) => {
      form.removeEventListener('submit', onSubmit);
      byId('key-cancel').removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      pendingKey = null;
      resolve(key);
    };
    const onSubmit = (event) => {
      event.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      sessionStorage.setItem(KEY_STORE, key);
      done(key);
    };
    const onCancel = (event) => {
      event.preventDefault();
      done(null);
    };
    form.addEventListener('submit', onSubmit);
    byId('key-cancel').addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    input.focus();
  });
  return pendingKey;
}

async function readBody(response) {
  const type = response.headers.get('content-type') || '';
  if (type.includes('json')) return response.json();
  const text = await response.text();
  return { title: response.statusText, status: response.status, detail: text.slice(0, 500) };
}

/**
 * api('/v1/translate', {json: body}) -> parsed JSON, or throws ApiError.
 * Options: json (a body to send as JSON), body (FormData or bytes), query (URLSearchParams), signal.
 */
export async function api(path, { json, body, query, signal } = {}) {
  const url = query ? `${path}?${query}` : path;
  for (let attempt = 0; attempt < 6; attempt++) {
    const headers = new Headers({ Accept: 'application/json' });
    const key = sessionStorage.getItem(KEY_STORE);
    if (key) headers.set('X-API-Key', key);
    let payload = body;
    if (json !== undefined) {
      headers.set('Content-Type', 'application/json');
      payload = JSON.stringify(json);
    }
    const response = await fetch(url, { method: payload === undefined ? 'GET' : 'POST', headers, body: payload, signal });
    if (response.status === 401) {
      const problem = await readBody(response);
      const current = sessionStorage.getItem(KEY_STORE);
      if (current && current !== key) continue; // another request got a new key meanwhile
      if (current) sessionStorage.removeItem(KEY_STORE);
      const reason = key ? 'The service refused that key; enter another.' : 'This service needs an API key (sent as X-API-Key).';
      if ((await askKey(reason)) === null) throw new ApiError(401, problem);
      continue;
    }
    if (response.status === 503 && attempt < 5) {
      // every execution slot is busy: wait as told and retry
      const wait = Number(response.headers.get('Retry-After')) || 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 3) * 1000 * (0.5 + Math.random())));
      continue;
    }
    const data = await readBody(response);
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }
  throw new ApiError(503, { title: 'Busy', detail: 'The service stayed busy; try again.' });
}

/** The lines a problem is shown as, each message once: with field errors, the headline is the status and title
 * and each error follows as `loc: msg`; the detail is left out, because the service writes it from those same
 * errors (app/clipbridge/api/problems.py: `msg (loc)`, or the first five `loc: msg` joined). Without errors the
 * headline carries the detail. */
export function problemLines(exc) {
  if (!(exc instanceof ApiError)) return [String(exc)];
  const head = `${exc.status} ${exc.problem.title || ''}`.trim();
  if (!exc.errors.length) return [`${head}: ${exc.message}`];
  return [head, ...exc.errors.map((e) => `${e.loc}: ${e.msg}`)];
}

/** Shows a failed upload in `errors`: the problem's lines (problemLines), one item each. */
export function showProblem(errors, exc) {
  errors.replaceChildren(h('ul', {}, problemLines(exc).map((t) => h('li', { text: t }))));
}

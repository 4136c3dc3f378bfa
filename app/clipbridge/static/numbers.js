// Numbers on the wire: JSON numbers, or strings ("nan", "inf", "-inf", integers beyond 2^53, float literals).
// JavaScript's doubles cannot hold every int64, so integers are handled as BigInt and sent as strings
// whenever a JSON number would not carry them exactly.
// Imported by any module here (a leaf: it imports nothing).

const FLOAT_MAX = {
  float16: 65504,
  bfloat16: 3.3895313892515355e38,
  float32: 3.4028234663852886e38,
  float64: Number.MAX_VALUE,
};

function intRange(bits, signed) {
  return signed ? [-(1n << BigInt(bits - 1)), (1n << BigInt(bits - 1)) - 1n] : [0n, (1n << BigInt(bits)) - 1n];
}

const INT_RANGE = {
  int8: intRange(8, true), int16: intRange(16, true), int32: intRange(32, true), int64: intRange(64, true),
  uint8: intRange(8, false), uint16: intRange(16, false), uint32: intRange(32, false), uint64: intRange(64, false),
};

export const isFloatDtype = (dtype) => dtype in FLOAT_MAX;
export const isIntDtype = (dtype) => dtype in INT_RANGE;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

/** An integer literal or value as a wire value: a number when exact, else its decimal string. */
export function wireInt(value) {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : String(value);
}

/**
 * JSON.parse that keeps integers beyond 2^53 (and literals that overflow a double) exact, as strings,
 * which is how the API reads them too.
 */
export function parseJsonExact(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const m = (c === '-' || (c >= '0' && c <= '9')) && NUMBER.exec(text);
    if (m) {
      const tok = m[0];
      const lossy = INTEGER.test(tok) ? !Number.isSafeInteger(Number(tok)) : !Number.isFinite(Number(tok));
      out += lossy ? `"${tok}"` : tok;
      i += tok.length;
      continue;
    }
    out += c;
    i += 1;
  }
  return JSON.parse(out);
}

/** What a form field holds -> the wire value: '' is absent (undefined), numbers stay numbers when exact. */
export function fromField(text) {
  const t = text.trim();
  if (t === '') return undefined;
  NUMBER.lastIndex = 0;
  const m = NUMBER.exec(t);
  if (!m || m[0] !== t) return t; // "nan", "-inf", "0x1.8p+1", or something the service will name as wrong
  if (INTEGER.test(t)) return wireInt(t);
  return Number.isFinite(Number(t)) ? Number(t) : t;
}

/** A wire value as text for a form field. */
export function toField(value) {
  return value === undefined || value === null ? '' : String(value);
}

/** A wire value as a JavaScript number (approximate for big integers; for plotting only). */
export function toNumber(value) {
  if (typeof value === 'number') return value;
  const t = String(value).trim().toLowerCase();
  if (t === 'nan') return NaN;
  if (t === 'inf' || t === '+inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  return Number(t);
}

/** Equal outputs: NaN equals NaN, and the sign of zero is not a difference (the service's rules). */
export function sameValue(a, b) {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  return String(a).toLowerCase() === String(b).toLowerCase();
}

function toBigInt(value) {
  if (value === undefined || value === null) return null;
  const t = String(value);
  return INTEGER.test(t) ? BigInt(t) : null;
}

function sortUnique(values, cmp) {
  return values.sort(cmp).filter((v, k, all) => k === 0 || cmp(all[k - 1], v) !== 0);
}

function intSamples(dtype, lower, upper) {
  const [dmin, dmax] = INT_RANGE[dtype];
  let lo = toBigInt(lower) ?? dmin;
  let hi = toBigInt(upper) ?? dmax;
  if (lo > hi) [lo, hi] = [hi, lo];
  const quarter = (hi - lo) / 4n;
  const pad = quarter > 8n ? quarter : 8n;
  const a = lo - pad > dmin ? lo - pad : dmin;
  const b = hi + pad < dmax ? hi + pad : dmax;
  const xs = [];
  if (b - a <= 400n) {
    for (let v = a; v <= b; v++) xs.push(v);
  } else {
    for (let k = 0n; k < 300n; k++) xs.push(a + ((b - a) * k) / 299n);
    for (const edge of [lo, hi]) {
      for (let d = -2n; d <= 2n; d++) if (edge + d >= dmin && edge + d <= dmax) xs.push(edge + d);
    }
  }
  const sorted = sortUnique(xs, (p, q) => (p < q ? -1 : p > q ? 1 : 0));
  return sorted.map((v) => wireInt(v));
}

function floatSamples(dtype, lower, upper) {
  const fmax = FLOAT_MAX[dtype];
  const finite = [lower, upper].map(toNumber).filter(Number.isFinite);
  let lo;
  let hi;
  if (finite.length === 2) [lo, hi] = [Math.min(...finite), Math.max(...finite)];
  else if (finite.length === 1) {
    const w = Math.max(4, Math.abs(finite[0]));
    [lo, hi] = [finite[0] - w, finite[0] + w];
  } else [lo, hi] = [-fmax, fmax];
  const pad = (hi - lo) / 4 || 1;
  const a = Math.max(-fmax, lo - pad);
  const b = Math.min(fmax, hi + pad);
  const xs = [...finite.filter((v) => Math.abs(v) <= fmax)];
  for (let k = 0; k <= 240; k++) xs.push(a + ((b - a) * k) / 240);
  return sortUnique(xs, (p, q) => p - q);
}

/**
 * Sample inputs for the transfer plot, in the spec's dtype, over a range around the effective bounds
 * (before a ScaleBias, when the meaning has one, so the plotted x is the input). Returns wire values;
 * float dtypes get -inf, inf and nan at the end (`special` of them), which are not plotted.
 */
export function samplesFor(meaning) {
  const dtype = meaning.dtype;
  let lower = meaning.lower ? meaning.lower.value : null;
  let upper = meaning.upper ? meaning.upper.value : null;
  const sb = meaning.scale_bias;
  if (isFloatDtype(dtype)) {
    if (sb) {
      const [scale, bias] = [toNumber(sb.scale), toNumber(sb.bias)];
      if (Number.isFinite(scale) && scale !== 0 && Number.isFinite(bias)) {
        [lower, upper] = [lower, upper].map((v) => (v === null ? null : (toNumber(v) - bias) / scale));
      }
    }
    const xs = floatSamples(dtype, lower, upper);
    return { xs: [...xs, '-inf', 'inf', 'nan'], special: 3 };
  }
  if (isIntDtype(dtype)) {
    if (sb) {
      const [scale, bias] = [toNumber(sb.scale), toNumber(sb.bias)];
      if (Number.isFinite(scale) && scale !== 0 && Number.isFinite(bias)) {
        [lower, upper] = [lower, upper].map((v) => (v === null ? null : Math.round((toNumber(v) - bias) / scale)));
        if (lower !== null && upper !== null && lower > upper) [lower, upper] = [upper, lower];
      }
    }
    return { xs: intSamples(dtype, lower, upper), special: 0 };
  }
  return { xs: [], special: 0 };
}

/** A short label for a number on an axis or in a table. */
export function shortNumber(v) {
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

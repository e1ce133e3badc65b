// Pieces shared by the ONNX Runtime tools (ort_crosscheck.js, ort_worker.js): loading the
// package, seeded random inputs, medians.
'use strict';

const path = require('path');

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    try {
      return require(path.join(__dirname, '..', 'node_modules', 'onnxruntime-node'));
    } catch (e2) {
      throw new Error('onnxruntime-node is not installed: run ' +
                      '`ONNXRUNTIME_NODE_INSTALL=skip npm ci` in the repository root');
    }
  }
}

// Seeded generator (SplitMix32-style) so that runs are reproducible.
function makeRng(seed) {
  let s = (seed >>> 0) ^ 0x9e3779b9;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

// Symbolic or unknown dimensions take `dim` (or the value named in `dims` for that symbol).
function concreteShape(meta, dim, dims) {
  return meta.shape.map((d) => {
    if (typeof d === 'number' && d >= 0) return d;
    if (dims && typeof d === 'string' && d in dims) return dims[d];
    return dim;
  });
}

// IEEE half and bfloat16 bit patterns, rounded to nearest even (the JS side of float16 and
// bfloat16 models: onnxruntime-node takes and gives their raw 16-bit patterns).
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function bfloat16Bits(x) {
  f32[0] = x;
  const b = u32[0];
  if (Number.isNaN(x)) return 0x7fc0;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}
function bfloat16Value(h) {
  u32[0] = h << 16;
  return f32[0];
}
function float16Bits(x) {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);  // inf, NaN
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;  // overflow to infinity
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rest = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rest > half || (rest === half && (h & 1))) ++h;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) ++h;  // may carry into the exponent
  return sign | h;
}
function float16Value(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return sign * m * Math.pow(2, -24);
  if (e === 0x1f) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * Math.pow(2, e - 15);
}

// A tensor's values as numbers (float16 and bfloat16 decoded from their bit patterns).
function tensorValues(t) {
  if ((t.type === 'float16' || t.type === 'bfloat16') && t.data instanceof Uint16Array) {
    const dec = t.type === 'float16' ? float16Value : bfloat16Value;
    return Array.from(t.data, dec);
  }
  return t.data;
}

// Integer inputs are drawn in [0, intHigh) (default 8): indices into the smallest table a model
// reads them with (a token-type embedding has 2 rows) need a smaller bound (ort_worker's load).
function randomTensor(ort, meta, dim, rng, dims, intHigh = 8) {
  const shape = concreteShape(meta, dim, dims);
  const n = shape.reduce((a, b) => a * b, 1);
  switch (meta.type) {
    case 'float32': {
      const v = new Float32Array(n);
      for (let i = 0; i < n; ++i) v[i] = 2 * rng() - 1;
      return new ort.Tensor('float32', v, shape);
    }
    case 'float16':
    case 'bfloat16': {
      const v = new Uint16Array(n);
      const enc = meta.type === 'float16' ? float16Bits : bfloat16Bits;
      for (let i = 0; i < n; ++i) v[i] = enc(2 * rng() - 1);
      return new ort.Tensor(meta.type, v, shape);
    }
    case 'float64': {
      const v = new Float64Array(n);
      for (let i = 0; i < n; ++i) v[i] = 2 * rng() - 1;
      return new ort.Tensor('float64', v, shape);
    }
    case 'int64': {
      const v = new BigInt64Array(n);
      for (let i = 0; i < n; ++i) v[i] = BigInt(Math.floor(rng() * intHigh));
      return new ort.Tensor('int64', v, shape);
    }
    case 'int32': {
      const v = new Int32Array(n);
      for (let i = 0; i < n; ++i) v[i] = Math.floor(rng() * intHigh);
      return new ort.Tensor('int32', v, shape);
    }
    case 'bool': {
      const v = new Uint8Array(n);
      for (let i = 0; i < n; ++i) v[i] = rng() < 0.5 ? 1 : 0;
      return new ort.Tensor('bool', v, shape);
    }
    default:
      throw new Error(`input '${meta.name}': random values of type ${meta.type} are not supported`);
  }
}

// Compares output `a` (the optimized model's) against `b` (the original's, the reference):
// |a - b| <= atol' + rtol * |b| elementwise, where atol' is atol, or with scaleAtol atol times
// the reference's largest magnitude (at least 1), graphsub's own tolerance (src/exec).
function compareOutput(name, a, b, rtol, atol, scaleAtol = false) {
  const r = {name, maxAbs: 0, maxRel: 0, maxValue: 0, ok: true, shape: Array.from(b.dims)};
  if (a.dims.length !== b.dims.length || a.dims.some((d, i) => d !== b.dims[i])) {
    r.ok = false;
    r.maxAbs = r.maxRel = Infinity;
    r.note = `shape ${JSON.stringify(a.dims)} vs original ${JSON.stringify(b.dims)}`;
    return r;
  }
  const x = tensorValues(a), y = tensorValues(b);
  for (let i = 0; i < y.length; ++i) {
    const yi = Math.abs(Number(y[i]));
    if (Number.isFinite(yi)) r.maxValue = Math.max(r.maxValue, yi);
  }
  if (scaleAtol) atol *= Math.max(1, r.maxValue);
  for (let i = 0; i < y.length; ++i) {
    const xi = Number(x[i]), yi = Number(y[i]);
    if (!Number.isFinite(xi) || !Number.isFinite(yi)) {
      // Non-finite values agree only with the same value (NaN with NaN, inf with inf).
      r.nonFinite = (r.nonFinite || 0) + (Number.isFinite(yi) ? 0 : 1);
      if (!((Number.isNaN(xi) && Number.isNaN(yi)) || xi === yi)) {
        r.ok = false;
        r.maxAbs = Infinity;
      }
      continue;
    }
    const diff = Math.abs(xi - yi);
    const scale = Math.max(Math.abs(xi), Math.abs(yi));
    r.maxAbs = Math.max(r.maxAbs, diff);
    if (scale > 0) r.maxRel = Math.max(r.maxRel, diff / scale);
    if (!(diff <= atol + rtol * Math.abs(yi))) r.ok = false;
  }
  return r;
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timeOnce(session, feeds) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

module.exports = {
  compareOutput, loadOrt, makeRng, concreteShape, randomTensor, tensorValues, median, timeOnce,
};

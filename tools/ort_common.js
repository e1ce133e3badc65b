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

function randomTensor(ort, meta, dim, rng, dims) {
  const shape = concreteShape(meta, dim, dims);
  const n = shape.reduce((a, b) => a * b, 1);
  switch (meta.type) {
    case 'float32': {
      const v = new Float32Array(n);
      for (let i = 0; i < n; ++i) v[i] = 2 * rng() - 1;
      return new ort.Tensor('float32', v, shape);
    }
    case 'float64': {
      const v = new Float64Array(n);
      for (let i = 0; i < n; ++i) v[i] = 2 * rng() - 1;
      return new ort.Tensor('float64', v, shape);
    }
    case 'int64': {
      const v = new BigInt64Array(n);
      for (let i = 0; i < n; ++i) v[i] = BigInt(Math.floor(rng() * 8));
      return new ort.Tensor('int64', v, shape);
    }
    case 'int32': {
      const v = new Int32Array(n);
      for (let i = 0; i < n; ++i) v[i] = Math.floor(rng() * 8);
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

module.exports = {loadOrt, makeRng, concreteShape, randomTensor, median, timeOnce};

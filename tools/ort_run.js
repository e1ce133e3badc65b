#!/usr/bin/env node
// Runs one ONNX model in ONNX Runtime on inputs read from a file, for comparisons with
// graphsub's reference executor (tests/test_onnx_torchvision.cpp).
//
//   node tools/ort_run.js MODEL.onnx INPUTS.bin OUTPUTS.bin
// INPUTS.bin holds every float32 input in the model's input order, raw little-endian, each
// of the size its declared shape gives. OUTPUTS.bin receives every output the same way; the
// output names and shapes are printed as JSON on stdout. Exit status 2 on errors.
'use strict';

const fs = require('fs');
const {loadOrt} = require('./ort_common');

async function main() {
  const [modelPath, inPath, outPath] = process.argv.slice(2);
  if (!outPath) throw new Error('usage: ort_run.js MODEL.onnx INPUTS.bin OUTPUTS.bin');
  const ort = loadOrt();
  const session = await ort.InferenceSession.create(modelPath, {graphOptimizationLevel: 'all'});
  const bytes = fs.readFileSync(inPath);
  const feeds = {};
  let offset = 0;
  for (const meta of session.inputMetadata) {
    if (meta.type !== 'float32') throw new Error(`input '${meta.name}' is ${meta.type}, not float32`);
    const shape = meta.shape.map((d) => {
      if (typeof d !== 'number') throw new Error(`input '${meta.name}' has a symbolic shape`);
      return d;
    });
    const n = shape.reduce((a, b) => a * b, 1);
    if (offset + 4 * n > bytes.length) throw new Error(`${inPath} is too short for input '${meta.name}'`);
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = bytes.readFloatLE(offset + 4 * i);
    offset += 4 * n;
    feeds[meta.name] = new ort.Tensor('float32', data, shape);
  }
  if (offset !== bytes.length) throw new Error(`${inPath} has ${bytes.length - offset} extra bytes`);
  const results = await session.run(feeds);
  const chunks = [], info = [];
  for (const name of session.outputNames) {
    const t = results[name];
    if (t.type !== 'float32') throw new Error(`output '${name}' is ${t.type}, not float32`);
    chunks.push(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    info.push({name, shape: Array.from(t.dims)});
  }
  fs.writeFileSync(outPath, Buffer.concat(chunks));
  console.log(JSON.stringify(info));
}

main().catch((e) => {
  console.error(`error: ${e.message}`);
  process.exit(2);
});

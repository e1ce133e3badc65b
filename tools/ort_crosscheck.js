#!/usr/bin/env node
// Cross-checks an optimized ONNX model against its original in ONNX Runtime: both run on the
// same seeded random inputs, every output is compared (|opt - orig| <= atol + rtol * |orig|),
// and both are timed with ONNX Runtime's graph optimizations fully on, alternating the two
// models run by run and quoting medians.
//
//   node tools/ort_crosscheck.js ORIGINAL.onnx OPTIMIZED.onnx [options]
//     --inputs N     random input sets compared (default 3)
//     --seed S       seed of the random inputs (default 1)
//     --rtol R       relative tolerance (default 1e-4)
//     --atol A       absolute tolerance (default 1e-5)
//     --time R       timed runs of each model, alternated (default 20; 0: no timing)
//     --warmup W     untimed runs of each model before timing (default 3)
//     --threads T    ONNX Runtime intra-op threads (default 0: its own choice)
//     --dim D        value for symbolic input dimensions (default 1)
//     --json FILE    also write the result as JSON to FILE
// Exit status: 0 outputs match, 1 mismatch, 2 error (unreadable model, different interfaces).
// Needs onnxruntime-node (ONNXRUNTIME_NODE_INSTALL=skip npm ci in the repository root).
'use strict';

const fs = require('fs');
const {compareOutput, loadOrt, makeRng, randomTensor, median, timeOnce} = require('./ort_common');

function parseArgs(argv) {
  const opts = {inputs: 3, seed: 1, rtol: 1e-4, atol: 1e-5, time: 20, warmup: 3, threads: 0,
                dim: 1, json: null, files: []};
  const numeric = new Set(['inputs', 'seed', 'rtol', 'atol', 'time', 'warmup', 'threads', 'dim']);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const key = a.slice(2);
      if (!(key in opts) || key === 'files') throw new Error(`unknown option ${a}`);
      if (i + 1 >= argv.length) throw new Error(`option ${a} needs a value`);
      const v = argv[++i];
      if (numeric.has(key)) {
        const n = Number(v);
        if (!Number.isFinite(n)) throw new Error(`option ${a}: '${v}' is not a number`);
        opts[key] = n;
      } else {
        opts[key] = v;
      }
    } else {
      opts.files.push(a);
    }
  }
  if (opts.files.length !== 2) throw new Error('usage: ort_crosscheck.js ORIGINAL.onnx OPTIMIZED.onnx [options]');
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const sessionOpts = {graphOptimizationLevel: 'all', executionMode: 'sequential'};
  if (opts.threads > 0) sessionOpts.intraOpNumThreads = opts.threads;
  const [origPath, optPath] = opts.files;
  const open = async (p) => {
    try {
      return await ort.InferenceSession.create(p, sessionOpts);
    } catch (e) {
      throw new Error(`ONNX Runtime cannot load '${p}': ${e.message}`);
    }
  };
  const orig = await open(origPath);
  const opt = await open(optPath);

  const sameList = (a, b) => a.length === b.length && a.every((x) => b.includes(x));
  if (!sameList(orig.inputNames, opt.inputNames))
    throw new Error(`input names differ: ${orig.inputNames} vs ${opt.inputNames}`);
  if (!sameList(orig.outputNames, opt.outputNames))
    throw new Error(`output names differ: ${orig.outputNames} vs ${opt.outputNames}`);

  const rng = makeRng(opts.seed);
  const outputs = new Map(orig.outputNames.map((n) => [n, {name: n, maxAbs: 0, maxRel: 0, ok: true}]));
  let feeds = null;
  for (let k = 0; k < opts.inputs; ++k) {
    feeds = {};
    for (const meta of orig.inputMetadata) feeds[meta.name] = randomTensor(ort, meta, opts.dim, rng);
    const [ra, rb] = [await opt.run(feeds), await orig.run(feeds)];
    for (const n of orig.outputNames) {
      const c = compareOutput(n, ra[n], rb[n], opts.rtol, opts.atol);
      const acc = outputs.get(n);
      acc.maxAbs = Math.max(acc.maxAbs, c.maxAbs);
      acc.maxRel = Math.max(acc.maxRel, c.maxRel);
      acc.ok = acc.ok && c.ok;
      acc.shape = c.shape;
      if (c.nonFinite) acc.nonFinite = (acc.nonFinite || 0) + c.nonFinite;
      if (c.note) acc.note = c.note;
    }
  }

  const result = {original: origPath, optimized: optPath, inputs: opts.inputs, rtol: opts.rtol,
                  atol: opts.atol, outputs: [...outputs.values()], ok: true};
  result.ok = result.outputs.every((o) => o.ok);

  if (opts.time > 0 && feeds) {
    for (let i = 0; i < opts.warmup; ++i) {
      await orig.run(feeds);
      await opt.run(feeds);
    }
    const tOrig = [], tOpt = [];
    for (let i = 0; i < opts.time; ++i) {
      // Alternate which model goes first so drift on a shared machine hits both alike.
      if (i % 2 === 0) {
        tOrig.push(await timeOnce(orig, feeds));
        tOpt.push(await timeOnce(opt, feeds));
      } else {
        tOpt.push(await timeOnce(opt, feeds));
        tOrig.push(await timeOnce(orig, feeds));
      }
    }
    result.timing = {runs: opts.time, originalMs: median(tOrig), optimizedMs: median(tOpt)};
    result.timing.speedup = result.timing.originalMs / result.timing.optimizedMs;
  }

  for (const o of result.outputs) {
    console.log(`output ${o.name} [${(o.shape || []).join('x')}]: max abs diff ${o.maxAbs.toExponential(3)}, ` +
                `max rel diff ${o.maxRel.toExponential(3)} ${o.ok ? 'ok' : 'MISMATCH'}` +
                (o.note ? ` (${o.note})` : '') +
                (o.nonFinite ? ` (warning: ${o.nonFinite} NaN/inf values in the original, compared for equality only)` : ''));
  }
  if (result.timing) {
    const t = result.timing;
    console.log(`ONNX Runtime ${ort.env.versions.common}, graph optimizations all, median of ${t.runs} ` +
                `alternated runs: original ${t.originalMs.toFixed(3)} ms, optimized ` +
                `${t.optimizedMs.toFixed(3)} ms, speedup ${t.speedup.toFixed(3)}x`);
  }
  console.log(result.ok ? `outputs match (rtol ${opts.rtol}, atol ${opts.atol}) on ${opts.inputs} random input sets`
                        : `OUTPUTS DIFFER beyond rtol ${opts.rtol}, atol ${opts.atol}`);
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(result, null, 2) + '\n');
  return result.ok ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => {
  console.error(`error: ${e.message}`);
  process.exit(2);
});

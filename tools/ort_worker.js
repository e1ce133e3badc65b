#!/usr/bin/env node
// A long-lived ONNX Runtime worker driven over a pipe by graphsub (src/ort/ort_worker.cpp):
// one JSON request per line on stdin, one JSON reply per line on stdout. Sessions stay loaded
// between requests, so a caller can time several models against each other in one process,
// alternating them run by run (the only fair comparison on a shared, noisy machine).
//
// The protocol (requests, replies, versions, inputs) is written in docs/ort-worker.md; a change
// an older client would misread raises PROTOCOL there and here.
'use strict';

const PROTOCOL = 1;

const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');
const {compareOutput, loadOrt, makeRng, median, randomTensor, timeOnce} = require('./ort_common');

const ort = loadOrt();
const sessions = new Map();  // id -> {session, feeds, profileDir}

function describe(session) {
  const meta = (m) => ({name: m.name, type: m.type, shape: m.shape});
  return {inputs: session.inputMetadata.map(meta), outputs: session.outputMetadata.map(meta)};
}

async function load(req) {
  // Fatal messages only: every failure comes back to the client as an error reply, and the
  // runtime's own log lines (a reference input that cannot run at some dimensions, the
  // warning that a saved NCHWc graph is specific to this CPU) would reach graphsub's terminal
  // even with --quiet.
  const opts = {
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    interOpNumThreads: 1,
    logSeverityLevel: 4,
  };
  if (req.threads > 0) opts.intraOpNumThreads = req.threads;
  let profileDir = null;
  if (req.profile) {
    profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphsub-ort-profile-'));
    opts.enableProfiling = true;
    opts.profileFilePrefix = path.join(profileDir, 'profile');
  }
  if (req.optimized) opts.optimizedModelFilePath = req.optimized;
  let session;
  try {
    session = await ort.InferenceSession.create(req.path, opts);
  } catch (e) {
    throw new Error(`ONNX Runtime cannot load '${req.path}': ${e.message}`);
  }
  const {feeds, intHigh} = await runnableFeeds(session, req);
  const old = sessions.get(req.id);
  if (old) await old.session.release();
  sessions.set(req.id, {session, feeds, intHigh, profileDir, dim: req.dim || 1, dims: req.dims});
  return describe(session);
}

// Random inputs the model runs on. Integer inputs are drawn in [0, 8) first; where the model
// reads them as indices into a smaller table (BERT's token types: 2 rows) ONNX Runtime
// refuses them, and they are drawn in [0, 2), then set to 0. The same seed and model give the
// same feeds, so an original and its rewrite get the same ones.
async function runnableFeeds(session, req) {
  const draw = (intHigh) => {
    const rng = makeRng(req.seed || 1);
    const feeds = {};
    for (const meta of session.inputMetadata)
      feeds[meta.name] = randomTensor(ort, meta, req.dim || 1, rng, req.dims, intHigh);
    return feeds;
  };
  const isInt = (m) => m.type === 'int64' || m.type === 'int32';
  if (!session.inputMetadata.some(isInt)) return {feeds: draw(8), intHigh: 8};
  let last;
  for (const intHigh of [8, 2, 1]) {
    const feeds = draw(intHigh);
    try {
      await session.run(feeds);
      return {feeds, intHigh};
    } catch (e) {
      last = e;
      if (!/indices|index|bounds/i.test(e.message)) break;  // not about the integer inputs
    }
  }
  // Kept as drawn: the timing reports ONNX Runtime's own error, as before.
  void last;
  return {feeds: draw(8), intHigh: 8};
}

function get(id) {
  const s = sessions.get(id);
  if (!s) throw new Error(`no model loaded as '${id}'`);
  return s;
}

async function time(req) {
  const ids = req.ids;
  const list = ids.map(get);
  for (let w = 0; w < (req.warmup || 0); ++w)
    for (const s of list) await s.session.run(s.feeds);
  const ms = Object.fromEntries(ids.map((id) => [id, []]));
  for (let r = 0; r < req.runs; ++r) {
    const order = ids.map((_, i) => ids[(i + r) % ids.length]);
    if (r % 2) order.reverse();
    for (const id of order) {
      const s = sessions.get(id);
      ms[id].push(await timeOnce(s.session, s.feeds));
    }
  }
  return {ms};
}

// Per-node profiling: ONNX Runtime writes a Chrome-trace JSON when profiling ends; node events
// carry the operator type in args.op_name and their duration in microseconds. Each node's time
// is the median over every run since the session was loaded (warm-up runs included, which the
// median outvotes), so a caller may run the session before asking.
async function profile(req) {
  const s = get(req.id);
  if (!s.profileDir) throw new Error(`model '${req.id}' was loaded without profiling`);
  for (let r = 0; r < req.runs; ++r) await s.session.run(s.feeds);
  await s.session.endProfiling();
  const files = fs.readdirSync(s.profileDir).filter((f) => f.endsWith('.json'));
  if (!files.length) throw new Error('ONNX Runtime wrote no profile');
  const events = JSON.parse(fs.readFileSync(path.join(s.profileDir, files[0]), 'utf8'));
  fs.rmSync(s.profileDir, {recursive: true, force: true});
  s.profileDir = null;
  const perNode = new Map();  // node name -> {op, us: [...]}
  for (const e of events) {
    if (e.cat !== 'Node' || !e.args || !e.args.op_name || !e.name.endsWith('_kernel_time')) continue;
    if (!perNode.has(e.name)) perNode.set(e.name, {op: e.args.op_name, us: []});
    perNode.get(e.name).us.push(e.dur);
  }
  const byOp = {};
  const counts = {};  // kernels run per op type: what the runtime fused the graph into
  let total = 0;
  for (const {op, us} of perNode.values()) {
    const ms = median(us) / 1000;
    byOp[op] = (byOp[op] || 0) + ms;
    counts[op] = (counts[op] || 0) + 1;
    total += ms;
  }
  return {by_op: byOp, counts, total_ms: total, kernels: perNode.size};
}

// Runs the candidate against the reference on the same random inputs, output by output.
async function compare(req) {
  const [ref, cand] = req.ids.map(get);
  const names = ref.session.outputNames;
  const missing = names.filter((n) => !cand.session.outputNames.includes(n));
  if (missing.length) throw new Error(`the candidate lacks output(s) ${missing.join(', ')}`);
  const acc = new Map(names.map((n) => [n, {name: n, max_abs_diff: 0, max_rel_diff: 0,
                                            max_abs_value: 0, match: true}]));
  const rng = makeRng(req.seed || 1);
  for (let k = 0; k < (req.sets || 1); ++k) {
    const feeds = {};
    for (const meta of ref.session.inputMetadata)
      feeds[meta.name] = randomTensor(ort, meta, ref.dim, rng, ref.dims, ref.intHigh);
    let b;
    try {  // the reference first: where it cannot run, nothing is compared
      b = await ref.session.run(feeds);
    } catch (e) {
      return {match: false, outputs: [], reference_error: String(e.message || e)};
    }
    const a = await cand.session.run(feeds);
    for (const n of names) {
      const c = compareOutput(n, a[n], b[n], req.rtol, req.atol, true);
      const o = acc.get(n);
      o.max_abs_diff = Math.max(o.max_abs_diff, c.maxAbs);
      o.max_rel_diff = Math.max(o.max_rel_diff, c.maxRel);
      o.max_abs_value = Math.max(o.max_abs_value, c.maxValue);
      o.match = o.match && c.ok;
      if (c.note) o.note = c.note;
    }
  }
  const outputs = [...acc.values()];
  // JSON has no Infinity: a shape mismatch reports -1 as its difference.
  for (const o of outputs)
    for (const k of ['max_abs_diff', 'max_rel_diff']) if (!Number.isFinite(o[k])) o[k] = -1;
  return {match: outputs.every((o) => o.match), outputs};
}

async function handle(req) {
  switch (req.op) {
    case 'hello': return {protocol: PROTOCOL, ort: ort.env.versions.common, node: process.version};
    case 'load': return load(req);
    case 'time': return time(req);
    case 'profile': return profile(req);
    case 'compare': return compare(req);
    case 'unload': {
      const s = sessions.get(req.id);
      if (s) await s.session.release();
      sessions.delete(req.id);
      return {};
    }
    default: throw new Error(`unknown request '${req.op}'`);
  }
}

async function main() {
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  for await (const line of rl) {
    if (!line.trim()) continue;
    let reply;
    try {
      const req = JSON.parse(line);
      if (req.op === 'quit') break;
      reply = Object.assign({ok: true}, await handle(req));
    } catch (e) {
      reply = {ok: false, error: e.message};
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
  for (const s of sessions.values()) await s.session.release();
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`ort_worker: ${e.message}\n`);
  process.exit(2);
});

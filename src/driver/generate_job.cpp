#include "driver/generate_job.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/text.h"
#include "dist/launched_cluster.h"
#include "driver/data_paths.h"
#include "driver/optimize_options.h"
#include "driver/rule_jobs.h"
#include "gen/library_file.h"
#include "gen/prove/verifier_prover.h"
#include "gen/shard_files.h"
#include "ir/parallel.h"
#include "rules/rule_parser.h"

namespace graphsub::driver {

namespace {

// "act=none,relu" or "poolavg.kernel=3": restricts a declared domain (for one operator).
void apply_param_override(const std::string& spec, gen::ParamDomains& d) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw OptionError(fmt::format("--params '{}': expected NAME=V1,V2 or OP.NAME=V1,V2", spec));
  std::string key = spec.substr(0, eq);
  std::string domain = key.substr(key.find('.') == std::string::npos ? 0 : key.find('.') + 1);
  auto it = d.find(domain);
  if (it == d.end())
    throw OptionError(fmt::format("--params '{}': no domain '{}' is declared", spec, domain));
  std::vector<AxiomParam> values;
  for (auto& v : split_list(spec.substr(eq + 1), ',')) {
    AxiomParam p = v;
    try {
      size_t used = 0;
      int64_t i = std::stoll(v, &used);
      if (used == v.size()) p = i;
    } catch (const std::logic_error&) {
    }
    if (std::find(it->second.begin(), it->second.end(), p) == it->second.end())
      throw OptionError(
          fmt::format("--params '{}': '{}' is not in the declared domain '{}'", spec, v, domain));
    values.push_back(p);
  }
  if (values.empty()) throw OptionError(fmt::format("--params '{}': no values", spec));
  d[key] = values;
}

// Threads of one rank: the cores of its machine shared among the ranks on it.
int default_threads() {
  int local = 1;
  if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) local = std::max(1, std::atoi(v));
  return std::max(1, hardware_threads() / local);
}

// The run directory states the command and the number of ranks that made it: a rerun with
// other flags or another number of ranks would read shares of another run.
void claim_run_dir(const std::string& dir, const std::string& command, gen::Cluster& cluster) {
  std::string manifest = fmt::format("{}\nranks {}\n", command, cluster.size());
  std::string path = dir + "/run.txt";
  if (std::optional<std::string> found = gen::read_file_if_any(path); found && *found != manifest)
    throw OptionError(fmt::format(
        "--run-dir '{}' holds a run of other flags or another number of ranks ({}); remove it "
        "or give another folder",
        dir, path));
  cluster.barrier();  // every rank has read it before rank 0 writes it
  if (cluster.rank() == 0) {
    gen::make_dirs(dir);
    gen::write_file_whole(path, manifest);
  }
  cluster.barrier();
}

// --shards "K/R": (K, R), 1 <= K <= R; "" is (0, 0), every share.
std::pair<int, int> parse_shards(const std::string& text) {
  if (text.empty()) return {0, 0};
  int k = 0, r = 0;
  char slash = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &k, &slash, &r, &rest) != 3 || slash != '/' || k < 1 ||
      r < 1 || k > r || r > 1'000'000)
    throw OptionError(fmt::format(
        "--shards '{}': expected K/R, the shares of ranks 0 to K-1 of R (1 <= K <= R)", text));
  return {k, r};
}

// The command as the header states it: every flag that shapes the output, in one order.
std::string command_line(const GenerateJobOptions& o) {
  std::string command = fmt::format("graphsub generate --max-ops {}", o.max_ops);
  if (!o.ops.empty()) command += " --ops " + o.ops;
  if (!o.with_ops.empty()) command += " --with-ops " + o.with_ops;
  for (const auto& p : o.params) command += " --params " + p;
  if (!o.pool.empty()) command += " --pool " + o.pool;
  if (!o.axioms.empty()) command += " --axioms " + o.axioms;
  command += fmt::format(" --seed {} --rlimit {}", o.seed, o.rlimit);
  if (o.parts) command += fmt::format(" --parts {}", o.parts);
  if (!o.shards.empty()) command += " --shards " + o.shards;
  GenerateJobOptions defaults;
  if (o.reduce_from != defaults.reduce_from)
    command += fmt::format(" --reduce-from {}", o.reduce_from);
  if (o.minimal_reads_from != defaults.minimal_reads_from)
    command += fmt::format(" --minimal-reads-from {}", o.minimal_reads_from);
  if (o.max_vars != defaults.max_vars) command += fmt::format(" --max-vars {}", o.max_vars);
  if (o.proof_epoch != defaults.proof_epoch)
    command += fmt::format(" --proof-epoch {}", o.proof_epoch);
  if (!o.output.empty()) command += " -o " + o.output;
  return command;
}

std::string unproved_path_of(const GenerateJobOptions& o) {
  if (!o.unproved.empty() || o.output.empty()) return o.unproved;
  std::string report = o.output;
  if (report.size() > 6 && report.substr(report.size() - 6) == ".rules")
    report.resize(report.size() - 6);
  return report + ".unproved";
}

}  // namespace

void finish(const GenerateJobOptions& o, const gen::GeneratorOptions& opts, gen::Cluster& cluster,
            GenerateJobResult& out, Reporter& rep);

GenerateJobResult run_generate_job(const GenerateJobOptions& o, Reporter& rep) {
  if (o.max_ops < 1 || o.max_ops > 5)
    throw OptionError(fmt::format("--max-ops {}: expected 1 to 5", o.max_ops));
  check_threads("--threads", o.threads);
  if (o.proof_epoch < 1)
    throw OptionError(fmt::format("--proof-epoch {}: expected 1 or more rules", o.proof_epoch));
  if (o.timeout_ms < 1000 || o.timeout_ms > 86'400'000)
    throw OptionError(fmt::format(
        "safety time limit {} ms (--safety-timeout-s): expected 1 s to 1 day", o.timeout_ms));
  GenerateJobResult out;
  out.unproved_path = unproved_path_of(o);
  if (!o.output.empty()) check_writable_file("-o", o.output);
  if (!out.unproved_path.empty()) check_writable_file("--unproved", out.unproved_path);

  // For builds on glibc's allocator (GRAPHSUB_TCMALLOC=OFF; the default build links
  // tcmalloc, where this does nothing): a verifier call without a kept context builds and
  // frees a fresh Z3 context (tens of MiB). With glibc's default 128 KiB top pad the heap is
  // grown and trimmed back on every call, and the page faults cost several times the proof
  // itself (measured: 237 rules on one thread, 15 s with the default, 1.5 s with this pad;
  // docs/benchmarks.md, Generator). Untouched pad pages are not resident, so peak memory
  // does not grow.
  mallopt(M_TOP_PAD, 256 << 20);
  gen::Cluster& cluster = o.cluster ? *o.cluster : dist::launched_cluster();
  out.rank = cluster.rank();
  out.ranks = cluster.size();
  out.threads = o.threads > 0 ? o.threads : default_threads();
  std::string axioms_file = o.axioms.empty() ? shipped_axioms() : o.axioms;
  rules::RuleSet axioms = rules::load_rules(axioms_file);

  gen::GeneratorOptions opts;
  opts.max_ops = o.max_ops;
  opts.ops = split_list(o.ops, ',');
  opts.with_ops = split_list(o.with_ops, ',');
  opts.threads = out.threads;
  opts.seed = o.seed;
  opts.domains = gen::domains_of(axioms);
  for (const auto& p : o.params) apply_param_override(p, opts.domains);
  opts.lift_domains = opts.domains;
  opts.pool = o.pool.empty() ? gen::default_pool() : gen::parse_pool(o.pool);
  opts.max_parts = o.parts;
  std::tie(opts.sample_shards, opts.sample_of) = parse_shards(o.shards);
  opts.reduce_from_ops = o.reduce_from;
  opts.max_prover_vars = o.max_vars;
  opts.minimal_reads_from_ops = o.minimal_reads_from;
  out.command = command_line(o);
  out.pool_size = opts.pool.size();

  verify::VerifyOptions vo;
  // Bounded by Z3's resource count, not by time, so that the library is the same on a loaded
  // and an idle machine; the time limit only stops a run that went wrong, with an error.
  vo.rlimit = o.rlimit;
  vo.timeout_ms = o.timeout_ms;
  vo.timeout_is_error = true;
  vo.count_resources = true;
  // Open and refuted classes are treated alike (retried under conditions, reported
  // unproved): the exhaustive test would only change their report's wording, at up to
  // seconds per open class.
  vo.exhaustive_instances = 0;
  vo.threads = out.threads;
  vo.seed = o.seed;
  // Every candidate type-checks with its variables at pool shapes: the numeric test's
  // fallback tries those before the axioms' whole shape space.
  vo.fallback_types = gen::pool_types(opts.pool);
  // Lanes of rules share a context (the same lanes on any machine and load, so the resource
  // counts are the same too); saves about 3 ms of each call.
  vo.reuse_context = true;
  // One instance per parameter assignment before the solver, all four after a proof
  // (VerifyOptions::numeric_first_per_params).
  vo.numeric_first_per_params = 1;
  verify::Verifier verifier(axioms, vo);
  out.run_dir = o.run_dir;
  if (opts.sample_of && cluster.size() > 1)
    throw OptionError(
        fmt::format("--shards {} runs in one process, not on {} ranks", o.shards, cluster.size()));
  if (out.run_dir.empty() && cluster.size() > 1) {
    if (o.output.empty()) throw OptionError("a run on several ranks needs --run-dir or -o");
    out.run_dir = o.output + ".run";
  }
  // Only rank 0 talks and writes; the others' lines would repeat its own.
  Reporter& say = cluster.rank() == 0 ? rep : null_reporter();
  try {
    if (!out.run_dir.empty()) claim_run_dir(out.run_dir, out.command, cluster);
    opts.cluster = &cluster;
    opts.run_dir = out.run_dir;
    out.result = gen::run_generator(
        opts, gen::verifier_prover(verifier, say, cluster, out.run_dir, o.proof_epoch), say);
    finish(o, opts, cluster, out, say);
  } catch (const std::exception& e) {
    dist::abort_job(e.what());  // stops every rank (no-op alone): none waits at a barrier
    throw;
  }
  return out;
}

void finish(const GenerateJobOptions& o, const gen::GeneratorOptions& opts, gen::Cluster& cluster,
            GenerateJobResult& out, Reporter& rep) {
  // The shipped axioms by their name under the data folder: the header is the same wherever
  // the checkout lies.
  gen::LibraryInfo info{out.command, gen::pool_str(opts.pool),
                        o.axioms.empty() ? std::string(kAxiomsFile) : o.axioms};
  rep.progress("write", 0, 2, "the library");
  out.library = gen::library_text(out.result, info);
  rep.progress("write", 1, 2, "the unproved candidates");
  out.unproved = gen::unproved_text(out.result, info);
  if (cluster.rank() == 0) {
    if (!o.output.empty()) gen::write_file_whole(o.output, out.library);
    if (!out.unproved_path.empty()) gen::write_file_whole(out.unproved_path, out.unproved);
  }
  cluster.barrier();  // the library is written before the shares it came from are removed
  if (!out.run_dir.empty() && !o.keep_run_dir && cluster.rank() == 0) gen::remove_all(out.run_dir);
}

}  // namespace graphsub::driver

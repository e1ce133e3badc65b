#include "driver/unfold_job.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"
#include "driver/data_paths.h"
#include "driver/optimize_options.h"
#include "driver/rule_jobs.h"
#include "gen/library_file.h"
#include "gen/prove/verifier_prover.h"
#include "gen/shard_files.h"
#include "rules/rule_parser.h"
#include "verify/verifier.h"

namespace graphsub::driver {
namespace {

std::string command_line(const UnfoldJobOptions& o) {
  std::string command = "graphsub unfold";
  for (const auto& t : o.terms) command += fmt::format(" --term \"{}\"", t);
  command += " --unfold " + o.unfold;
  if (!o.via.empty()) command += " --via " + o.via;
  command += fmt::format(" --depth {}", o.depth);
  if (!o.axioms.empty()) command += " --axioms " + o.axioms;
  command += fmt::format(" --rlimit {}", o.rlimit ? o.rlimit : gen::kDefaultRlimit);
  if (!o.output.empty()) command += " -o " + o.output;
  return command;
}

// Where the forms type-check: batches of sequences with their hidden axis split into two
// heads (the fused terms' q, k and v), a scalar factor, and the masks of their scores
// ([B, 1, S, S] broadcast over the heads, [B, 2, S, S] whole). Without the masks a masked
// form has no instance here, and its numeric test falls back to the axioms' whole shape space
// (half a second a rule, ten minutes for the library under the sanitizers).
std::vector<TensorType> form_types() {
  std::vector<TensorType> types;
  for (const Shape& seq : {Shape{1, 2, 4}, Shape{2, 3, 4}}) {
    types.push_back(TensorType{.shape = seq});
    for (int64_t heads : {1, 2})
      types.push_back(TensorType{.shape = {seq[0], heads, seq[1], seq[1]}});
  }
  types.push_back(TensorType{});
  return types;
}

}  // namespace

UnfoldJobResult run_unfold_job(const UnfoldJobOptions& o, Reporter& rep) {
  if (o.terms.empty()) throw OptionError("--term: give at least one fused term");
  if (o.unfold.empty()) throw OptionError("--unfold: name the axioms that define the fused terms");
  if (o.depth < 0 || o.depth > 8)
    throw OptionError(fmt::format("--depth {}: expected 0 to 8", o.depth));
  check_threads("--threads", o.threads);
  if (!o.output.empty()) check_writable_file("-o", o.output);
  UnfoldJobResult out;
  out.command = command_line(o);
  rules::RuleSet axioms = rules::load_rules(o.axioms.empty() ? shipped_axioms() : o.axioms);
  gen::UnfoldOptions uo{.terms = o.terms,
                        .unfold = split_list(o.unfold, ','),
                        .via = split_list(o.via, ','),
                        .depth = o.depth};
  rep.progress("unfold", 0, 1, "the fused terms");
  out.unfolded = gen::unfold_fused(axioms, uo);

  // Proved as the generator proves: bounded by Z3's resource count, so that the library is
  // the same on any machine and load; the time limit is a safety net whose expiry is an error.
  verify::VerifyOptions vo;
  vo.rlimit = o.rlimit ? o.rlimit : gen::kDefaultRlimit;
  vo.timeout_ms = o.timeout_ms;
  vo.timeout_is_error = true;
  vo.threads = o.threads;
  vo.fallback_types = form_types();
  verify::Verifier verifier(axioms, vo);
  std::vector<rules::Rule> stated;
  for (const gen::Equality& e : out.unfolded.equalities) stated.push_back(gen::library_rule(e));
  std::vector<verify::RuleVerdict> verdicts = verifier.verify_all(stated, rep);

  gen::GeneratorResult lib;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].proved())
      lib.rules.push_back(out.unfolded.equalities[i]);
    else
      out.unproved.push_back(fmt::format("{}: {}", stated[i].name, verdicts[i].reason));
  }
  out.proved = lib.rules.size();
  if (!out.unproved.empty())
    throw Error(
        fmt::format("unfold: {} of {} forms not proved (a wrong axiom among those named?): {}",
                    out.unproved.size(), verdicts.size(), fmt::join(out.unproved, "; ")));
  lib.stages = {{"fused terms unfolded", out.unfolded.unfolded},
                {"forms reached", out.unfolded.forms},
                {"equalities (up to renaming)", out.unfolded.equalities.size()},
                {"proved", out.proved}};
  gen::LibraryInfo info{out.command, "", o.axioms.empty() ? std::string(kAxiomsFile) : o.axioms};
  out.library = gen::library_text(lib, info);
  if (!o.output.empty()) gen::write_file_whole(o.output, out.library);
  return out;
}

}  // namespace graphsub::driver

// The extension module graphsub._graphsub: thin bindings of the driver's jobs
// (src/driver). Each function takes the options the caller gave (None: the command line's
// default, taken from the driver's option structs), runs the job with run_interruptible and
// returns plain data. The public API, with its argument conversions, is python/graphsub.
#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "driver/data_paths.h"
#include "driver/evaluate_job.h"
#include "driver/generate_job.h"
#include "driver/optimize_job.h"
#include "driver/rule_jobs.h"
#include "driver/unfold_job.h"
#include "interruptible.h"
#include "rules/rule_printer.h"

namespace py = pybind11;
using namespace py::literals;

namespace graphsub::python {

namespace {

template <class T>
void set_if(T& field, const std::optional<T>& value) {
  if (value) field = *value;
}

// Returns (optimized model bytes or None, report JSON, failure message or "").
py::tuple optimize(const std::optional<py::bytes>& model_bytes, const std::string& path,
                   const std::optional<std::string>& target, const std::optional<size_t>& budget,
                   const std::optional<double>& alpha, const std::optional<double>& time_limit,
                   const std::optional<size_t>& max_queue, const std::optional<std::string>& cost,
                   const std::optional<std::vector<std::string>>& rules,
                   const std::vector<std::string>& disable_rules, bool builtin_rules,
                   const std::optional<int>& check,
                   const std::optional<std::string>& check_executor,
                   const std::optional<double>& rtol, const std::optional<double>& atol,
                   const std::vector<std::string>& input_shapes,
                   const std::vector<std::string>& dims, const std::optional<uint64_t>& seed,
                   const std::optional<int>& threads, const std::optional<std::string>& cache_dir,
                   const std::optional<int64_t>& opset, const std::optional<int>& guard_runs,
                   bool ort_contrib_ops, const py::object& progress) {
  driver::OnnxJobOptions o;
  auto& s = o.search;
  set_if(s.target, target);
  set_if(s.opt.search.budget, budget);
  set_if(s.opt.search.alpha, alpha);
  set_if(s.opt.search.time_limit_s, time_limit);
  set_if(s.opt.search.max_queue, max_queue);
  set_if(s.cost, cost);
  set_if(s.rules.rule_files, rules);
  s.rules.disabled = disable_rules;
  s.rules.builtin = builtin_rules;
  set_if(o.check_runs, check);
  set_if(o.check_executor, check_executor);
  set_if(s.opt.tolerance.rtol, rtol);
  set_if(s.opt.tolerance.atol, atol);
  o.input_shapes = input_shapes;
  o.dims = dims;
  set_if(s.opt.seed, seed);
  set_if(s.opt.threads, threads);
  set_if(s.opt.cache_dir, cache_dir);
  set_if(o.opset, opset);
  set_if(o.guard_runs, guard_runs);
  o.ort_contrib_ops = ort_contrib_ops;
  o.input = path;
  std::optional<std::string> bytes;
  if (model_bytes) bytes = std::string(*model_bytes);  // a copy, made with the GIL held
  driver::OnnxJobResult r;
  run_interruptible(
      [&](Reporter& rep) {
        driver::validate(o);  // before the rule library is read, as on the command line
        auto lib = driver::load_rule_library(o.search, rep, o.ort_contrib_ops);
        driver::OnnxJobObserver quiet;
        r = driver::run_onnx_job(o, bytes ? &*bytes : nullptr, *lib, rep, quiet);
      },
      progress);
  py::object model = r.failure.empty() ? py::object(py::bytes(r.model_bytes)) : py::none();
  return py::make_tuple(model, driver::report_json(r.report), r.failure);
}

py::list verdicts_list(const driver::VerifyJobResult& res) {
  py::list out;
  for (const auto& v : res.verdicts)
    out.append(py::dict("name"_a = v.name, "verdict"_a = verify::verdict_name(v.verdict),
                        "proved"_a = v.proved(), "reason"_a = v.reason,
                        "output"_a = v.output >= 0 ? py::object(py::int_(v.output)) : py::none(),
                        "tested"_a = v.tested, "numeric_ms"_a = v.numeric_ms,
                        "solver_ms"_a = v.solver_ms));
  return out;
}

py::list verify_rules(const std::string& file, const std::string& text,
                      const std::optional<std::string>& axioms,
                      const std::optional<unsigned>& timeout_ms,
                      const std::optional<unsigned>& rlimit, const std::optional<int>& threads,
                      bool numeric, bool reuse_context, const py::object& progress) {
  driver::VerifyJobOptions o;
  o.file = file;
  o.text = text;
  set_if(o.axioms, axioms);
  set_if(o.timeout_ms, timeout_ms);
  set_if(o.rlimit, rlimit);
  set_if(o.threads, threads);
  o.numeric = numeric;
  o.reuse_context = reuse_context;
  driver::VerifyJobResult res;
  run_interruptible([&](Reporter& rep) { res = driver::run_verify_job(o, rep); }, progress);
  return verdicts_list(res);
}

py::dict check_axioms(const std::optional<std::string>& axioms,
                      const std::vector<std::string>& only, const std::optional<int>& threads,
                      const std::optional<uint64_t>& seed, const py::object& progress) {
  driver::AxiomCheckJobOptions o;
  set_if(o.axioms, axioms);
  o.only = only;
  set_if(o.threads, threads);
  set_if(o.seed, seed);
  driver::AxiomCheckJobResult res;
  run_interruptible([&](Reporter& rep) { res = driver::run_check_axioms_job(o, rep); }, progress);
  py::list list;
  for (const auto& a : res.report.axioms)
    list.append(py::dict("name"_a = a.name, "holds"_a = a.holds, "instances"_a = a.instances,
                         "exact"_a = a.exact, "param_sets"_a = a.param_sets,
                         "counterexample"_a = a.counterexample));
  return py::dict("file"_a = res.file, "axioms"_a = list, "all_hold"_a = res.false_count() == 0,
                  "instances"_a = res.report.instances, "exact"_a = res.report.exact,
                  "seconds"_a = res.report.seconds);
}

py::dict generate(int max_ops, const std::optional<std::string>& ops,
                  const std::optional<std::string>& with_ops,
                  const std::vector<std::string>& params, const std::optional<std::string>& pool,
                  const std::optional<std::string>& axioms,
                  const std::optional<std::string>& output,
                  const std::optional<std::string>& unproved, const std::optional<int>& threads,
                  const std::optional<uint64_t>& seed, const std::optional<unsigned>& timeout_ms,
                  const std::optional<unsigned>& rlimit, const std::optional<size_t>& parts,
                  const std::optional<int>& reduce_from, const std::optional<int>& max_vars,
                  const std::optional<int>& minimal_reads_from,
                  const std::optional<std::string>& shards, const py::object& progress) {
  driver::GenerateJobOptions o;
  o.max_ops = max_ops;
  set_if(o.ops, ops);
  set_if(o.with_ops, with_ops);
  o.params = params;
  set_if(o.pool, pool);
  set_if(o.axioms, axioms);
  set_if(o.output, output);
  set_if(o.unproved, unproved);
  set_if(o.threads, threads);
  set_if(o.seed, seed);
  set_if(o.timeout_ms, timeout_ms);
  set_if(o.rlimit, rlimit);
  set_if(o.parts, parts);
  set_if(o.reduce_from, reduce_from);
  set_if(o.max_vars, max_vars);
  set_if(o.minimal_reads_from, minimal_reads_from);
  set_if(o.shards, shards);
  driver::GenerateJobResult job;
  run_interruptible([&](Reporter& rep) { job = driver::run_generate_job(o, rep); }, progress);
  const auto& res = job.result;
  return py::dict("library"_a = job.library, "unproved"_a = job.unproved, "command"_a = job.command,
                  "rules"_a = res.rules.size(), "lifted"_a = res.lifted,
                  "unproved_count"_a = res.unproved.size(), "graphs"_a = res.graphs,
                  "verifier_calls"_a = res.verifier_calls, "output"_a = o.output,
                  "unproved_path"_a = job.unproved_path, "seconds"_a = res.seconds);
}

py::dict unfold(const std::vector<std::string>& terms, const std::string& unfold,
                const std::optional<std::string>& via, const std::optional<int>& depth,
                const std::optional<std::string>& axioms, const std::optional<std::string>& output,
                const std::optional<unsigned>& rlimit, const std::optional<int>& threads,
                const py::object& progress) {
  driver::UnfoldJobOptions o;
  o.terms = terms;
  o.unfold = unfold;
  set_if(o.via, via);
  set_if(o.depth, depth);
  set_if(o.axioms, axioms);
  set_if(o.output, output);
  set_if(o.rlimit, rlimit);
  set_if(o.threads, threads);
  driver::UnfoldJobResult job;
  run_interruptible([&](Reporter& rep) { job = driver::run_unfold_job(o, rep); }, progress);
  return py::dict("library"_a = job.library, "command"_a = job.command, "rules"_a = job.proved,
                  "forms"_a = job.unfolded.forms, "output"_a = o.output);
}

py::list list_rules(const std::optional<std::vector<std::string>>& files, bool builtin,
                    const std::vector<std::string>& disabled) {
  opt::RuleLibraryOptions o;
  set_if(o.rule_files, files);
  o.builtin = builtin;
  o.disabled = disabled;
  std::vector<driver::RuleListing> rules;
  run_interruptible(
      [&](Reporter& rep) {
        for (const auto& f : o.rule_files) driver::check_readable_file("rules", f);
        rules = driver::list_rules(opt::RuleLibrary(driver::resolved(o), rep));
      },
      py::none());
  py::list out;
  for (const auto& r : rules)
    out.append(py::dict("name"_a = r.name, "origin"_a = r.origin, "text"_a = r.text));
  return out;
}

// inputs: (name, shape, float32 bytes) each; returns the outputs the same way.
py::list evaluate(
    const py::bytes& model_bytes,
    const std::vector<std::tuple<std::string, std::vector<int64_t>, py::bytes>>& inputs,
    const py::object& progress) {
  std::string bytes(model_bytes);
  TensorMap<float> feeds;
  for (const auto& [name, shape, data] : inputs) {
    std::string raw(data);
    HostTensor<float> t{Shape(shape.begin(), shape.end()), {}};
    if (static_cast<int64_t>(raw.size()) != numel(t.shape) * 4)
      throw Error(fmt::format("evaluate: input '{}' has {} bytes, not the {} of float32 {}", name,
                              raw.size(), numel(t.shape) * 4, shape_str(t.shape)));
    t.data.resize(raw.size() / 4);
    std::memcpy(t.data.data(), raw.data(), raw.size());
    feeds[name] = std::move(t);
  }
  std::vector<std::pair<std::string, HostTensor<float>>> outs;
  run_interruptible([&](Reporter& rep) { outs = driver::run_evaluate_job(bytes, feeds, rep); },
                    progress);
  py::list list;
  for (const auto& [name, t] : outs)
    list.append(py::make_tuple(
        name, std::vector<int64_t>(t.shape.begin(), t.shape.end()),
        py::bytes(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float))));
  return list;
}

}  // namespace

}  // namespace graphsub::python

using namespace graphsub;
using namespace graphsub::python;

PYBIND11_MODULE(_graphsub, m) {
  m.doc() = "graphsub's C++ jobs; use the package graphsub, not this module";
  // graphsub.Error carries the command line's messages; OptionError (a bad option value) is
  // also a ValueError. Registered most specific last: pybind11 tries the latest first.
  static py::handle error = PyErr_NewException("graphsub.Error", PyExc_Exception, nullptr);
  py::tuple option_bases = py::make_tuple(error, py::handle(PyExc_ValueError));
  static py::handle option_error =
      PyErr_NewException("graphsub.OptionError", option_bases.ptr(), nullptr);
  m.attr("Error") = error;
  m.attr("OptionError") = option_error;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Cancelled&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const driver::OptionError& e) {
      PyErr_SetString(option_error.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError,
                      "out of memory (the machine's memory or this process's limit ran out)");
    }
  });
  m.attr("targets") = driver::cost_targets();

  m.def("optimize", &optimize, "model_bytes"_a, "path"_a, "target"_a, "budget"_a, "alpha"_a,
        "time_limit"_a, "max_queue"_a, "cost"_a, "rules"_a, "disable_rules"_a, "builtin_rules"_a,
        "check"_a, "check_executor"_a, "rtol"_a, "atol"_a, "input_shapes"_a, "dims"_a, "seed"_a,
        "threads"_a, "cache_dir"_a, "opset"_a, "guard_runs"_a, "ort_contrib_ops"_a, "progress"_a);
  m.def("verify", &verify_rules, "file"_a, "text"_a, "axioms"_a, "timeout_ms"_a, "rlimit"_a,
        "threads"_a, "numeric"_a, "reuse_context"_a, "progress"_a);
  m.def("check_axioms", &check_axioms, "axioms"_a, "only"_a, "threads"_a, "seed"_a, "progress"_a);
  m.def("generate", &generate, "max_ops"_a, "ops"_a, "with_ops"_a, "params"_a, "pool"_a, "axioms"_a,
        "output"_a, "unproved"_a, "threads"_a, "seed"_a, "timeout_ms"_a, "rlimit"_a, "parts"_a,
        "reduce_from"_a, "max_vars"_a, "minimal_reads_from"_a, "shards"_a, "progress"_a);
  m.def("unfold", &unfold, "terms"_a, "unfold"_a, "via"_a, "depth"_a, "axioms"_a, "output"_a,
        "rlimit"_a, "threads"_a, "progress"_a);
  m.def("rules", &list_rules, "files"_a, "builtin"_a, "disabled"_a);
  m.def("evaluate", &evaluate, "model_bytes"_a, "inputs"_a, "progress"_a);
}

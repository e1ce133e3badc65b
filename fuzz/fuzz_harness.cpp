#include "fuzz/fuzz_harness.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "check/equivalence.h"
#include "core/error.h"
#include "driver/data_paths.h"
#include "onnx/onnx_model.h"
#include "opt/cost/analytic_cost.h"
#include "opt/search/optimize.h"

namespace graphsub::fuzz {
namespace {

namespace fs = std::filesystem;

// A fixed machine (not measured): the same input takes the same path on every machine.
opt::MachineProfile fixed_machine() {
  opt::MachineProfile m;
  m.cpu = "fuzz";
  m.isa = "fuzz";
  m.peak_gflops = 100;
  m.bandwidth_gbs = 20;
  m.op_overhead_us = 2;
  return m;
}

// The check runs the graph on the reference executor: only for small graphs, so that each
// input stays fast (the importer's own limits allow far larger ones).
constexpr int64_t kCheckElements = 1 << 16;

int64_t graph_elements(const Graph& g) {
  int64_t total = 0;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id))
      for (const auto& t : g.node(id).outputs) total += t.numel();
  return total;
}

void write_file(const fs::path& p, std::string_view bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The scratch folder and the file outside it that link.bin points to; both are removed
// when the process exits normally.
struct Scratch {
  fs::path dir, outside;
  Scratch() {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string stem = "graphsub-fuzz-" + std::to_string(::getpid());
    dir = base / stem;
    outside = base / (stem + "-secret");
    fs::create_directories(dir / "sub");
    write_file(outside, std::string(64, 'S'));
    std::error_code ec;
    fs::create_symlink(outside, dir / "link.bin", ec);
    fs::create_symlink("w.bin", dir / "inlink.bin", ec);
    ::mkfifo((dir / "fifo.bin").c_str(), 0600);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::remove(outside, ec);
  }
};

}  // namespace

const std::string& scratch_folder() {
  static const Scratch scratch;
  static const std::string dir = scratch.dir.string();
  return dir;
}

std::string pack_external(std::string_view model, std::string_view data) {
  std::string out(kExternalMagic);
  uint32_t n = static_cast<uint32_t>(model.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out.append(model);
  out.append(data);
  return out;
}

// The shipped rules, loaded once for the whole run (as the driver loads them once per job).
static const opt::RuleLibrary& shipped_library() {
  static const opt::RuleLibrary lib(driver::resolved({}), null_reporter());
  return lib;
}

void prepare() {
  prepare_onnx_import();
}

bool run_one_input(std::string_view bytes) {
  std::string_view model = bytes;
  std::string base_dir;  // "": external data is refused
  bool external = bytes.size() >= 8 && bytes.substr(0, 4) == kExternalMagic;
  if (external) {
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
      n |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[4 + i])) << (8 * i);
    model = bytes.substr(8, std::min<size_t>(n, bytes.size() - 8));
    base_dir = scratch_folder();
    write_file(fs::path(base_dir) / "w.bin", bytes.substr(8 + model.size()));
  }
  ImportedModel m;
  try {
    ImportOptions io;
    // Small limits: the fuzzer should find paths around them, not spend its time on
    // gigabyte allocations the limits allow.
    io.max_tensor_elements = 1 << 20;
    io.max_total_bytes = 64 << 20;
    m = import_onnx_bytes(model, base_dir, io);
  } catch (const Error&) {
    return false;
  }
  try {
    opt::OptimizeOptions oo;
    oo.search.budget = 8;
    oo.search.max_queue = 32;
    oo.check = false;  // below, with the executor of the ONNX path (opaque nodes cut)
    oo.precompute = true;
    opt::AnalyticCostModel cost(fixed_machine());
    opt::OptimizeResult r =
        opt::optimize_graph(m.graph, oo, shipped_library(), cost, null_reporter());
    if (graph_elements(m.graph) + graph_elements(r.optimized) <= kCheckElements)
      check_equivalent(m.graph, r.optimized, {.runs = 1, .seed = 1});
    export_onnx_bytes(r.optimized, m.info.get());
    if (external) {
      ExportOptions eo;
      eo.external_data = true;
      export_onnx_file(r.optimized, m.info.get(), scratch_folder() + "/out.onnx", eo);
    }
  } catch (const Error&) {
  }
  return true;
}

}  // namespace graphsub::fuzz

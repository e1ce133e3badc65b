// Layout probes on this machine's oneDNN, one thread: the measurements behind two executor
// and optimizer decisions (docs/benchmarks.md, Optimizer).
//  (a) Channel concat of five blocked [1,128,56,56] tensors (NasNet-A's cell output): oneDNN's
//      concat primitive against one reorder per input into a view of the output, with a
//      memcpy of the same bytes as the floor.
//  (b) BERT's attention matmuls ([16,16,64,64] batches) on dense operands against operands
//      read through the strides of the head transposes (transpose folded into the matmul),
//      and one such transpose as a copy: what folding the transposes would save.
// Medians of --runs runs (default 30), after one warm-up.
//
//   bench_layout_probes [--runs 30]
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <dnnl.hpp>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec_onednn/onednn_executor.h"

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Clock = std::chrono::steady_clock;

double median_ms(int runs, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void fill(memory& m, float v) {
  auto* p = static_cast<float*>(m.get_data_handle());
  std::fill(p, p + m.get_desc().get_size() / sizeof(float), v);
}

void concat_probe(dnnl::engine& eng, dnnl::stream& s, int runs) {
  const int parts = 5;
  memory::dims part{1, 128, 56, 56}, whole{1, 128 * parts, 56, 56};
  fmt::print("(a) channel concat of {} blocked [1,128,56,56] tensors ({:.1f} MB)\n\n", parts,
             parts * 128 * 56 * 56 * 4 / 1e6);
  fmt::print("| layout | oneDNN concat ms (impl) | reorders into views ms | memcpy ms |\n");
  fmt::print("|---|---|---|---|\n");
  for (auto [tag, name] : {std::pair{Tag::nChw8c, "nChw8c"}, std::pair{Tag::nChw16c, "nChw16c"}}) {
    std::vector<memory::desc> mds(parts, memory::desc(part, memory::data_type::f32, tag));
    std::vector<memory> srcs;
    for (auto& md : mds) {
      srcs.emplace_back(md, eng);
      fill(srcs.back(), 1.f);
    }
    dnnl::concat::primitive_desc pd(1, mds, eng);
    memory dst(pd.dst_desc(), eng);
    std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}};
    for (int i = 0; i < parts; ++i) args[DNNL_ARG_MULTIPLE_SRC + i] = srcs[i];
    dnnl::concat cat(pd);
    double concat_ms = median_ms(runs, [&] {
      cat.execute(s, args);
      s.wait();
    });
    memory::desc out_md(whole, memory::data_type::f32, tag);
    memory out(out_md, eng);
    std::vector<memory> views;
    std::vector<dnnl::reorder> copies;
    for (int i = 0; i < parts; ++i) {
      views.emplace_back(out_md.submemory_desc(part, {0, 128 * i, 0, 0}), eng,
                         out.get_data_handle());
      copies.emplace_back(srcs[i], views.back());
    }
    double reorder_ms = median_ms(runs, [&] {
      for (int i = 0; i < parts; ++i) copies[i].execute(s, srcs[i], views[i]);
      s.wait();
    });
    double memcpy_ms = median_ms(runs, [&] {
      size_t off = 0;
      for (auto& m : srcs) {
        size_t n = m.get_desc().get_size();
        std::memcpy(static_cast<char*>(out.get_data_handle()) + off, m.get_data_handle(), n);
        off += n;
      }
    });
    fmt::print("| {} | {:.3f} ({}) | {:.3f} | {:.3f} |\n", name, concat_ms, pd.impl_info_str(),
               reorder_ms, memcpy_ms);
  }
  fmt::print("\n");
}

void matmul_probe(dnnl::engine& eng, dnnl::stream& s, int runs) {
  // Heads [B=16, H=16, S=64, dk=64] taken from [B, S, H, dk] by transpose (0,2,1,3): strides
  // of the untransposed buffer.
  memory::dims d{16, 16, 64, 64};
  memory::desc dense(d, memory::data_type::f32, Tag::abcd);
  memory::desc heads(d, memory::data_type::f32, memory::dims{65536, 64, 1024, 1});
  memory::desc heads_t(d, memory::data_type::f32, memory::dims{65536, 64, 1, 1024});  // K^T
  fmt::print("(b) BERT attention matmuls, [16,16,64,64] batches\n\n");
  fmt::print("| case | ms (impl) |\n|---|---|\n");
  auto mm = [&](const char* name, const memory::desc& a, const memory::desc& b,
                const memory::desc& c) {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), eng);
    memory ma(a, eng), mb(b, eng), mc(c, eng);
    fill(ma, 1.f);
    fill(mb, 1.f);
    dnnl::matmul p(pd);
    double ms = median_ms(runs, [&] {
      p.execute(s, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
      s.wait();
    });
    fmt::print("| {} | {:.3f} ({}) |\n", name, ms, pd.impl_info_str());
  };
  mm("Q K^T, dense operands", dense, dense, dense);
  mm("Q K^T, Q and K^T read through the head strides", heads, heads_t, dense);
  mm("P V, dense", dense, dense, dense);
  mm("P V, V read through the head strides", dense, heads, dense);
  mm("P V, V and the output through the head strides", dense, heads, heads);
  memory src(heads, eng), dst(dense, eng);
  fill(src, 1.f);
  dnnl::reorder tr(src, dst);
  double ms = median_ms(runs, [&] {
    tr.execute(s, src, dst);
    s.wait();
  });
  fmt::print("| one head transpose as a copy (reorder) | {:.3f} |\n\n", ms);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 30;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--runs") runs = std::max(1, std::stoi(argv[i + 1]));
  omp_set_num_threads(1);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  fmt::print("machine: {} (oneDNN ISA), 1 thread, medians of {} runs\n\n",
             graphsub::onednn_cpu_isa(), runs);
  concat_probe(eng, s, runs);
  matmul_probe(eng, s, runs);
  return 0;
}

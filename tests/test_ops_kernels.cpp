// Reference kernels against independent, straightforward implementations written here (one
// output element at a time, with explicit bounds checks), on randomised shapes and attributes,
// for both instantiations: float (within a relative tolerance) and wrap-around uint32 (exact).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>

#include "ops/scalar.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::for_each_index;
using testutil::max_rel_error;
using testutil::run_op;
using Ints = std::vector<int64_t>;

#if defined(GRAPHSUB_ASAN)
constexpr int kTrials = 6;
#else
constexpr int kTrials = 30;
#endif

// Accumulator of the straightforward implementations: double for float, exact uint32 else.
template <class T>
using Acc = std::conditional_t<std::is_same_v<T, float>, double, uint32_t>;

template <class T>
HostTensor<T> random_tensor(const Shape& s, std::mt19937& rng) {
  if constexpr (std::is_same_v<T, float>)
    return testutil::random_f32(s, rng);
  else
    return testutil::random_u32(s, rng);
}

template <class T>
void expect_same(const HostTensor<T>& got, const HostTensor<T>& want, const std::string& what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  if constexpr (std::is_same_v<T, float>)
    EXPECT_LT(max_rel_error(got, want), 1e-4) << what;
  else
    EXPECT_EQ(got.data, want.data) << what;
}

int64_t rand_int(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

const char* kActs[] = {"none", "relu", "sigmoid", "tanh"};

template <class T>
T act_of(const std::string& a, T v) {
  return apply_act(parse_act(a), v);
}

// ---- matmul ----
template <class T>
void check_matmul(std::mt19937& rng) {
  for (int trial = 0; trial < kTrials; ++trial) {
    int64_t m = rand_int(rng, 1, 6), k = rand_int(rng, 1, 6), n = rand_int(rng, 1, 6);
    Shape batch;
    for (int64_t i = rand_int(rng, 0, 2); i > 0; --i) batch.push_back(rand_int(rng, 1, 3));
    bool b_batched = !batch.empty() && rand_int(rng, 0, 1);
    bool with_bias = rand_int(rng, 0, 1);
    std::string act = kActs[rand_int(rng, 0, 3)];
    Shape as = batch, bs = b_batched ? batch : Shape{};
    as.insert(as.end(), {m, k});
    bs.insert(bs.end(), {k, n});
    std::vector<HostTensor<T>> ins{random_tensor<T>(as, rng), random_tensor<T>(bs, rng)};
    if (with_bias) ins.push_back(random_tensor<T>({n}, rng));
    auto got = run_op<T>("matmul", ins, {{"act", act}}).at(0);
    Shape os = batch;
    os.insert(os.end(), {m, n});
    HostTensor<T> want{os, std::vector<T>(static_cast<size_t>(numel(os)))};
    int64_t nb = numel(batch);
    for (int64_t bt = 0; bt < nb; ++bt)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          Acc<T> acc = with_bias ? Acc<T>(ins[2].data[j]) : Acc<T>{};
          for (int64_t kk = 0; kk < k; ++kk)
            acc += Acc<T>(ins[0].data[(bt * m + i) * k + kk]) *
                   Acc<T>(ins[1].data[((b_batched ? bt : 0) * k + kk) * n + j]);
          want.data[(bt * m + i) * n + j] = act_of(act, static_cast<T>(acc));
        }
    expect_same(got, want, fmt::format("matmul {} x {} act {}", shape_str(as), shape_str(bs), act));
  }
}

TEST(OpsKernels, MatmulF32) {
  std::mt19937 rng(1);
  check_matmul<float>(rng);
}
TEST(OpsKernels, MatmulU32) {
  std::mt19937 rng(2);
  check_matmul<uint32_t>(rng);
}

// ---- conv ----
template <class T>
void check_conv(std::mt19937& rng) {
  int done = 0;
  while (done < kTrials) {
    int64_t n = rand_int(rng, 1, 2), groups = rand_int(rng, 1, 3), cg = rand_int(rng, 1, 3),
            og = rand_int(rng, 1, 3), h = rand_int(rng, 1, 9), w = rand_int(rng, 1, 9),
            kh = rand_int(rng, 1, 5), kw = rand_int(rng, 1, 5), sh = rand_int(rng, 1, 3),
            sw = rand_int(rng, 1, 3), dh = rand_int(rng, 1, 2), dw = rand_int(rng, 1, 2);
    // Inputs down to 1x1 with wide kernels and pads: windows that overhang on both sides.
    Ints pads{rand_int(rng, 0, 3), rand_int(rng, 0, 3), rand_int(rng, 0, 3), rand_int(rng, 0, 3)};
    int64_t oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1),
            ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1);
    if (oh < 0 || ow < 0) continue;
    oh = oh / sh + 1;
    ow = ow / sw + 1;
    ++done;
    int64_t c = groups * cg, o = groups * og;
    bool with_bias = rand_int(rng, 0, 1);
    std::string act = kActs[rand_int(rng, 0, 3)];
    std::vector<HostTensor<T>> ins{random_tensor<T>({n, c, h, w}, rng),
                                   random_tensor<T>({o, cg, kh, kw}, rng)};
    if (with_bias) ins.push_back(random_tensor<T>({o}, rng));
    Attrs attrs{
        {"stride", Ints{sh, sw}}, {"pads", pads}, {"dilations", Ints{dh, dw}}, {"act", act}};
    auto got = run_op<T>("conv", ins, attrs).at(0);
    HostTensor<T> want{{n, o, oh, ow}, std::vector<T>(static_cast<size_t>(n * o * oh * ow))};
    auto& x = ins[0].data;
    auto& wt = ins[1].data;
    for_each_index(want.shape, [&](const std::vector<int64_t>& i) {
      int64_t g = i[1] / og;
      Acc<T> acc = with_bias ? Acc<T>(ins[2].data[i[1]]) : Acc<T>{};
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            int64_t y = i[2] * sh - pads[0] + ky * dh, xx = i[3] * sw - pads[1] + kx * dw;
            if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
            acc += Acc<T>(x[((i[0] * c + g * cg + ci) * h + y) * w + xx]) *
                   Acc<T>(wt[((i[1] * cg + ci) * kh + ky) * kw + kx]);
          }
      want.data[testutil::flat_index(want.shape, i)] = act_of(act, static_cast<T>(acc));
    });
    expect_same(got, want,
                fmt::format("conv x[{},{},{},{}] w[{},{},{},{}] {}", n, c, h, w, o, cg, kh, kw,
                            attrs.str()));
  }
}

// A 5x5 kernel with pads 2 on a 1x1 input: the left taps see only padding (this overran
// the column buffer once).
TEST(OpsKernels, ConvKernelWiderThanInput) {
  std::mt19937 rng(5);
  std::vector<HostTensor<float>> ins{random_tensor<float>({1, 2, 1, 1}, rng),
                                     random_tensor<float>({3, 2, 5, 5}, rng)};
  Attrs attrs{{"stride", Ints{1, 1}}, {"pads", Ints{2, 2, 2, 2}}, {"act", std::string("none")}};
  auto got = run_op<float>("conv", ins, attrs).at(0);
  ASSERT_EQ(got.shape, (Shape{1, 3, 1, 1}));
  for (int64_t o = 0; o < 3; ++o) {
    double want = 0;  // only the centre tap (2,2) reads the input
    for (int64_t ci = 0; ci < 2; ++ci)
      want += double(ins[0].data[ci]) * double(ins[1].data[((o * 2 + ci) * 5 + 2) * 5 + 2]);
    EXPECT_NEAR(got.data[o], want, 1e-5 * (1 + std::abs(want)));
  }
}

TEST(OpsKernels, ConvF32) {
  std::mt19937 rng(3);
  check_conv<float>(rng);
}
TEST(OpsKernels, ConvU32) {
  std::mt19937 rng(4);
  check_conv<uint32_t>(rng);
}

// ---- pools ----
template <class T>
void check_pools(std::mt19937& rng) {
  for (int trial = 0; trial < kTrials; ++trial) {
    int64_t n = rand_int(rng, 1, 2), c = rand_int(rng, 1, 3), h = rand_int(rng, 3, 8),
            w = rand_int(rng, 3, 8), kh = rand_int(rng, 1, 3), kw = rand_int(rng, 1, 3),
            sh = rand_int(rng, 1, 3), sw = rand_int(rng, 1, 3);
    Ints pads{rand_int(rng, 0, kh - 1), rand_int(rng, 0, kw - 1), rand_int(rng, 0, kh - 1),
              rand_int(rng, 0, kw - 1)};
    int64_t include = rand_int(rng, 0, 1);
    int64_t oh = (h + pads[0] + pads[2] - kh) / sh + 1, ow = (w + pads[1] + pads[3] - kw) / sw + 1;
    auto x = random_tensor<T>({n, c, h, w}, rng);
    Attrs attrs{{"kernel", Ints{kh, kw}}, {"stride", Ints{sh, sw}}, {"pads", pads}};
    auto got_max = run_op<T>("poolmax", {x}, attrs).at(0);
    attrs.set("count_include_pad", include);
    auto got_avg = run_op<T>("poolavg", {x}, attrs).at(0);
    HostTensor<T> want_max{{n, c, oh, ow}, std::vector<T>(static_cast<size_t>(n * c * oh * ow))};
    HostTensor<T> want_avg = want_max;
    for_each_index(want_max.shape, [&](const std::vector<int64_t>& i) {
      Acc<T> sum{};
      T best{};
      int64_t count = 0;
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx) {
          int64_t y = i[2] * sh - pads[0] + ky, xx = i[3] * sw - pads[1] + kx;
          if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
          T v = x.data[((i[0] * c + i[1]) * h + y) * w + xx];
          best = count == 0 ? v : std::max(best, v);
          sum += Acc<T>(v);
          ++count;
        }
      int64_t div = include ? kh * kw : count;
      int64_t at = testutil::flat_index(want_max.shape, i);
      want_max.data[at] = best;
      if constexpr (std::is_same_v<T, float>)
        want_avg.data[at] = static_cast<float>(sum / static_cast<double>(div));
      else
        want_avg.data[at] = sum * Scalar<uint32_t>::inverse(div);
    });
    expect_same(got_max, want_max, "poolmax " + attrs.str());
    expect_same(got_avg, want_avg, "poolavg " + attrs.str());
  }
}

TEST(OpsKernels, PoolsF32) {
  std::mt19937 rng(5);
  check_pools<float>(rng);
}
TEST(OpsKernels, PoolsU32) {
  std::mt19937 rng(6);
  check_pools<uint32_t>(rng);
}

TEST(OpsKernels, PoolAvgHandValues) {
  // 1x1x2x2 input, 3x3 window, pads 1: every output sees all four values.
  HostTensor<float> x{{1, 1, 2, 2}, {1, 2, 3, 6}};
  Attrs a{{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}};
  auto incl = run_op<float>("poolavg", {x}, a).at(0);
  EXPECT_FLOAT_EQ(incl.data[0], 12.f / 9.f);
  a.set("count_include_pad", int64_t{0});
  auto excl = run_op<float>("poolavg", {x}, a).at(0);
  EXPECT_FLOAT_EQ(excl.data[3], 3.f);
  auto mx = run_op<float>("poolmax", {HostTensor<float>{{1, 1, 2, 2}, {-5, -2, -3, -4}}},
                          {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}})
                .at(0);
  EXPECT_EQ(mx.data, (std::vector<float>{-2, -2, -2, -2}));  // padding never wins a max
}

template <class T>
void check_global_avgpool(std::mt19937& rng) {
  auto x = random_tensor<T>({2, 3, 4, 5}, rng);
  auto got = run_op<T>("global_avgpool", {x}).at(0);
  HostTensor<T> want{{2, 3, 1, 1}, std::vector<T>(6)};
  for (int p = 0; p < 6; ++p) {
    Acc<T> s{};
    for (int i = 0; i < 20; ++i) s += Acc<T>(x.data[p * 20 + i]);
    if constexpr (std::is_same_v<T, float>)
      want.data[p] = static_cast<float>(s / 20);
    else
      want.data[p] = s * Scalar<uint32_t>::inverse(20);
  }
  expect_same(got, want, "global_avgpool");
}

TEST(OpsKernels, GlobalAvgPool) {
  std::mt19937 rng(7);
  check_global_avgpool<float>(rng);
  check_global_avgpool<uint32_t>(rng);
}

TEST(OpsKernels, EnlargeCentresTheKernel) {
  std::mt19937 rng(8);
  auto w = testutil::random_u32({2, 3, 1, 3}, rng);
  auto got = run_op<uint32_t>("enlarge", {w}, {{"kernel", Ints{5, 5}}}).at(0);
  ASSERT_EQ(got.shape, (Shape{2, 3, 5, 5}));
  for_each_index(got.shape, [&](const std::vector<int64_t>& i) {
    int64_t y = i[2] - 2, x = i[3] - 1;  // target 5x5 holds the 1x3 kernel at rows 2, cols 1..3
    uint32_t want = y == 0 && x >= 0 && x < 3 ? w.data[((i[0] * 3 + i[1]) * 1) * 3 + x] : 0u;
    EXPECT_EQ(got.data[testutil::flat_index(got.shape, i)], want);
  });
}

// ---- data movement ----
template <class T>
void check_transpose(std::mt19937& rng) {
  for (int trial = 0; trial < kTrials; ++trial) {
    int64_t r = rand_int(rng, 1, 4);
    Shape s;
    for (int64_t i = 0; i < r; ++i) s.push_back(rand_int(rng, 1, 4));
    Ints perm(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    auto x = random_tensor<T>(s, rng);
    auto got = run_op<T>("transpose", {x}, {{"perm", perm}}).at(0);
    Shape os;
    for (auto p : perm) os.push_back(s[p]);
    HostTensor<T> want{os, std::vector<T>(x.data.size())};
    for_each_index(s, [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> o;
      for (auto p : perm) o.push_back(i[p]);
      want.data[testutil::flat_index(os, o)] = x.data[testutil::flat_index(s, i)];
    });
    expect_same(got, want, "transpose " + shape_str(perm));
  }
  // Empty perm reverses.
  auto x = random_tensor<T>({2, 3}, rng);
  auto t = run_op<T>("transpose", {x}).at(0);
  ASSERT_EQ(t.shape, (Shape{3, 2}));
  EXPECT_EQ(t.data[1 * 2 + 0], x.data[0 * 3 + 1]);
}

TEST(OpsKernels, Transpose) {
  std::mt19937 rng(9);
  check_transpose<float>(rng);
  check_transpose<uint32_t>(rng);
}

TEST(OpsKernels, ConcatAndSplit) {
  std::mt19937 rng(10);
  for (int trial = 0; trial < kTrials; ++trial) {
    int64_t r = rand_int(rng, 1, 4), axis = rand_int(rng, 0, r - 1), parts = rand_int(rng, 1, 4);
    Shape base;
    for (int64_t i = 0; i < r; ++i) base.push_back(rand_int(rng, 1, 3));
    std::vector<HostTensor<uint32_t>> ins;
    Ints sizes;
    for (int64_t p = 0; p < parts; ++p) {
      Shape s = base;
      s[axis] = rand_int(rng, 1, 3);
      sizes.push_back(s[axis]);
      ins.push_back(testutil::random_u32(s, rng));
    }
    auto got = run_op<uint32_t>("concat", ins, {{"axis", axis - (trial % 2 ? r : 0)}}).at(0);
    Shape os = base;
    os[axis] = 0;
    for (auto s : sizes) os[axis] += s;
    ASSERT_EQ(got.shape, os);
    // Each output element comes from the part whose range along `axis` holds its index.
    for_each_index(os, [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> j = i;
      size_t p = 0;
      while (j[axis] >= sizes[p]) j[axis] -= sizes[p++];
      EXPECT_EQ(got.data[testutil::flat_index(os, i)],
                ins[p].data[testutil::flat_index(ins[p].shape, j)]);
    });
    if (parts >= 2) {
      auto back = run_op<uint32_t>("split", {got}, {{"axis", axis}, {"sizes", sizes}});
      ASSERT_EQ(back.size(), ins.size());
      for (size_t p = 0; p < ins.size(); ++p) {
        EXPECT_EQ(back[p].shape, ins[p].shape);
        EXPECT_EQ(back[p].data, ins[p].data);
      }
    }
  }
}

template <class T>
void check_pad_slice(std::mt19937& rng) {
  for (int trial = 0; trial < kTrials; ++trial) {
    int64_t r = rand_int(rng, 1, 4);
    Shape s;
    for (int64_t i = 0; i < r; ++i) s.push_back(rand_int(rng, 1, 5));
    auto x = random_tensor<T>(s, rng);
    // pad, with some negative (cropping) values
    Ints pads(2 * r);
    Shape ps = s;
    for (int64_t d = 0; d < r; ++d) {
      do {
        pads[d] = rand_int(rng, -1, 2);
        pads[d + r] = rand_int(rng, -1, 2);
      } while (s[d] + pads[d] + pads[d + r] < 1);
      ps[d] = s[d] + pads[d] + pads[d + r];
    }
    auto got = run_op<T>("pad", {x}, {{"pads", pads}, {"value", 2.0}}).at(0);
    HostTensor<T> want{ps, std::vector<T>(static_cast<size_t>(numel(ps)))};
    for_each_index(ps, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i = o;
      bool inside = true;
      for (int64_t d = 0; d < r; ++d) {
        i[d] -= pads[d];
        inside = inside && i[d] >= 0 && i[d] < s[d];
      }
      want.data[testutil::flat_index(ps, o)] = inside ? x.data[testutil::flat_index(s, i)] : T(2);
    });
    expect_same(got, want, "pad " + shape_str(pads));

    // slice: random starts/ends (out of range and negative too) and steps
    Ints starts, ends, axes, steps;
    std::vector<std::vector<int64_t>> picks(static_cast<size_t>(r));
    for (int64_t d = 0; d < r; ++d) {
      int64_t dim = s[d];
      picks[d].clear();
      for (int64_t i = 0; i < dim; ++i) picks[d].push_back(i);
      if (rand_int(rng, 0, 2) == 0) continue;  // axis not sliced
      int64_t st, en, step;
      std::vector<int64_t> idx;
      do {
        st = rand_int(rng, -dim - 2, dim + 2);
        en = rand_int(rng, -dim - 2, dim + 2);
        step = rand_int(rng, 1, 3) * (rand_int(rng, 0, 1) ? 1 : -1);
        // Independent reading of the ONNX rule: positions i visited from the clamped start.
        idx.clear();
        int64_t a = st < 0 ? st + dim : st, b = en < 0 ? en + dim : en;
        if (step > 0) {
          a = std::max<int64_t>(a, 0);
          for (int64_t i = 0; i < dim; ++i)
            if (i >= a && i < b && (i - a) % step == 0) idx.push_back(i);
        } else {
          a = std::min(a, dim - 1);
          for (int64_t i = dim - 1; i >= 0; --i)
            if (i <= a && i > b && (a - i) % -step == 0) idx.push_back(i);
        }
      } while (idx.empty());
      picks[d] = idx;
      starts.push_back(st);
      ends.push_back(en);
      axes.push_back(d - (rand_int(rng, 0, 1) ? r : 0));
      steps.push_back(step);
    }
    if (starts.empty()) continue;
    auto sl = run_op<T>("slice", {x},
                        {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}})
                  .at(0);
    Shape ss;
    for (auto& p : picks) ss.push_back(static_cast<int64_t>(p.size()));
    HostTensor<T> want_sl{ss, std::vector<T>(static_cast<size_t>(numel(ss)))};
    for_each_index(ss, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i(o.size());
      for (size_t d = 0; d < o.size(); ++d) i[d] = picks[d][o[d]];
      want_sl.data[testutil::flat_index(ss, o)] = x.data[testutil::flat_index(s, i)];
    });
    expect_same(sl, want_sl,
                fmt::format("slice {} starts {} ends {} axes {} steps {}", shape_str(s),
                            shape_str(starts), shape_str(ends), shape_str(axes), shape_str(steps)));
  }
}

TEST(OpsKernels, PadAndSlice) {
  std::mt19937 rng(11);
  check_pad_slice<float>(rng);
  check_pad_slice<uint32_t>(rng);
}

TEST(OpsKernels, ReshapeAndFlattenKeepData) {
  std::mt19937 rng(12);
  auto x = testutil::random_u32({2, 3, 4}, rng);
  auto r = run_op<uint32_t>("reshape", {x}, {{"shape", Ints{4, -1}}}).at(0);
  EXPECT_EQ(r.shape, (Shape{4, 6}));
  EXPECT_EQ(r.data, x.data);
  auto f = run_op<uint32_t>("flatten", {x}, {{"axis", 2}}).at(0);
  EXPECT_EQ(f.shape, (Shape{6, 4}));
  EXPECT_EQ(f.data, x.data);
}

// ---- normalisations ----
TEST(OpsKernels, BatchnormF32) {
  std::mt19937 rng(13);
  auto x = testutil::random_f32({2, 3, 4, 5}, rng);
  auto scale = testutil::random_f32({3}, rng), bias = testutil::random_f32({3}, rng),
       mean = testutil::random_f32({3}, rng);
  HostTensor<float> var{{3}, {0.5f, 1.0f, 2.0f}};
  auto got = run_op<float>("batchnorm", {x, scale, bias, mean, var}, {{"epsilon", 1e-3}}).at(0);
  HostTensor<float> want = x;
  for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
    int64_t at = testutil::flat_index(x.shape, i), c = i[1];
    want.data[at] = static_cast<float>(
        (x.data[at] - mean.data[c]) / std::sqrt(var.data[c] + 1e-3) * scale.data[c] + bias.data[c]);
  });
  expect_same(got, want, "batchnorm");
}

TEST(OpsKernels, SoftmaxF32) {
  std::mt19937 rng(14);
  for (int64_t axis : {0, 1, 2, -1}) {
    auto x = testutil::random_f32({3, 4, 5}, rng);
    for (auto& v : x.data) v *= 20;  // large values exercise the max subtraction
    auto got = run_op<float>("softmax", {x}, {{"axis", axis}}).at(0);
    int64_t a = axis < 0 ? axis + 3 : axis;
    HostTensor<float> want = x;
    for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
      double sum = 0;
      std::vector<int64_t> j = i;
      for (j[a] = 0; j[a] < x.shape[a]; ++j[a])
        sum += std::exp(static_cast<double>(x.data[testutil::flat_index(x.shape, j)]));
      int64_t at = testutil::flat_index(x.shape, i);
      want.data[at] = static_cast<float>(std::exp(static_cast<double>(x.data[at])) / sum);
    });
    expect_same(got, want, fmt::format("softmax axis {}", axis));
  }
}

TEST(OpsKernels, LayernormF32) {
  std::mt19937 rng(15);
  for (int64_t axis : {-1, 1}) {
    auto x = testutil::random_f32({2, 3, 4}, rng);
    Shape ns = axis == 1 ? Shape{3, 4} : Shape{4};
    auto scale = testutil::random_f32(ns, rng), bias = testutil::random_f32(ns, rng);
    for (bool with_bias : {false, true}) {
      std::vector<HostTensor<float>> ins{x, scale};
      if (with_bias) ins.push_back(bias);
      auto got = run_op<float>("layernorm", ins, {{"axis", axis}}).at(0);
      int64_t len = numel(ns), rows = x.shape[0] * x.shape[1] * x.shape[2] / len;
      HostTensor<float> want = x;
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < len; ++i) mean += x.data[r * len + i];
        mean /= static_cast<double>(len);
        for (int64_t i = 0; i < len; ++i) var += std::pow(x.data[r * len + i] - mean, 2);
        var /= static_cast<double>(len);
        for (int64_t i = 0; i < len; ++i)
          want.data[r * len + i] = static_cast<float>((x.data[r * len + i] - mean) /
                                                          std::sqrt(var + 1e-5) * scale.data[i] +
                                                      (with_bias ? bias.data[i] : 0.0));
      }
      expect_same(got, want, fmt::format("layernorm axis {} bias {}", axis, with_bias));
    }
  }
}

// uint32: the same formulas over the scalar stand-ins (exp, sqrt polynomials, modular
// division), one output at a time.
TEST(OpsKernels, NormalisationsU32) {
  using S = Scalar<uint32_t>;
  std::mt19937 rng(18);
  auto x = testutil::random_u32({2, 3, 4}, rng);
  auto c3 = [&] { return testutil::random_u32({3}, rng); };
  auto scale = c3(), bias = c3(), mean = c3(), var = c3();
  auto bn = run_op<uint32_t>("batchnorm", {x, scale, bias, mean, var}).at(0);
  for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
    int64_t at = testutil::flat_index(x.shape, i), c = i[1];
    uint32_t want = (x.data[at] - mean.data[c]) * S::div(scale.data[c], S::sqrt(var.data[c])) +
                    bias.data[c];  // epsilon 1e-5 rounds to 0
    EXPECT_EQ(bn.data[at], want);
  });
  auto sm = run_op<uint32_t>("softmax", {x}, {{"axis", 1}}).at(0);
  for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> j = i;
    uint32_t mx = 0, sum = 0;
    for (j[1] = 0; j[1] < 3; ++j[1]) mx = std::max(mx, x.data[testutil::flat_index(x.shape, j)]);
    for (j[1] = 0; j[1] < 3; ++j[1]) sum += S::exp(x.data[testutil::flat_index(x.shape, j)] - mx);
    int64_t at = testutil::flat_index(x.shape, i);
    EXPECT_EQ(sm.data[at], S::div(S::exp(x.data[at] - mx), sum));
  });
  auto g = testutil::random_u32({4}, rng), b = testutil::random_u32({4}, rng);
  auto ln = run_op<uint32_t>("layernorm", {x, g, b}).at(0);
  for (int64_t r = 0; r < 6; ++r) {
    const uint32_t* row = x.data.data() + r * 4;
    uint32_t m = (row[0] + row[1] + row[2] + row[3]) * S::inverse(4), v = 0;
    for (int i = 0; i < 4; ++i) v += (row[i] - m) * (row[i] - m);
    uint32_t inv = S::div(1, S::sqrt(v * S::inverse(4)));
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(ln.data[r * 4 + i], (row[i] - m) * inv * g.data[i] + b.data[i]);
  }
}

template <class T>
void check_reduce_mean(std::mt19937& rng) {
  for (int trial = 0; trial < kTrials; ++trial) {
    int64_t r = rand_int(rng, 1, 4);
    Shape s;
    for (int64_t i = 0; i < r; ++i) s.push_back(rand_int(rng, 1, 4));
    Ints axes;
    std::vector<bool> red(static_cast<size_t>(r), false);
    for (int64_t d = 0; d < r; ++d)
      if (rand_int(rng, 0, 1)) {
        axes.push_back(d);
        red[d] = true;
      }
    if (axes.empty()) red.assign(static_cast<size_t>(r), true);
    int64_t keep = rand_int(rng, 0, 1);
    auto x = random_tensor<T>(s, rng);
    auto got = run_op<T>("reduce_mean", {x}, {{"axes", axes}, {"keepdims", keep}}).at(0);
    Shape ks, os;
    for (int64_t d = 0; d < r; ++d) {
      ks.push_back(red[d] ? 1 : s[d]);
      if (!red[d] || keep) os.push_back(red[d] ? 1 : s[d]);
    }
    std::vector<Acc<T>> sums(static_cast<size_t>(numel(ks)), Acc<T>{});
    for_each_index(s, [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> k = i;
      for (int64_t d = 0; d < r; ++d)
        if (red[d]) k[d] = 0;
      sums[testutil::flat_index(ks, k)] += Acc<T>(x.data[testutil::flat_index(s, i)]);
    });
    int64_t count = numel(s) / numel(ks);
    HostTensor<T> want{os, {}};
    for (auto v : sums) {
      if constexpr (std::is_same_v<T, float>)
        want.data.push_back(static_cast<float>(v / static_cast<double>(count)));
      else
        want.data.push_back(v * Scalar<uint32_t>::mean_factor(count));
    }
    expect_same(got, want, fmt::format("reduce_mean {} axes {}", shape_str(s), shape_str(axes)));
  }
}

TEST(OpsKernels, ReduceMean) {
  std::mt19937 rng(16);
  check_reduce_mean<float>(rng);
  check_reduce_mean<uint32_t>(rng);
}

// ---- element-wise family ----
TEST(OpsKernels, ElementwiseAgainstScalarFunctions) {
  std::mt19937 rng(17);
  auto a = testutil::random_f32({2, 3, 4}, rng), b = testutil::random_f32({3, 1}, rng);
  auto add = run_op<float>("add", {a, b}).at(0);
  auto div = run_op<float>("div", {a, b}).at(0);
  for_each_index(a.shape, [&](const std::vector<int64_t>& i) {
    int64_t at = testutil::flat_index(a.shape, i);
    float bv = b.data[i[1]];
    EXPECT_FLOAT_EQ(add.data[at], a.data[at] + bv);
    EXPECT_FLOAT_EQ(div.data[at], a.data[at] / bv);
  });
  auto s = run_op<float>("smul", {a, HostTensor<float>{{}, {3.f}}}).at(0);
  for (size_t i = 0; i < a.data.size(); ++i) EXPECT_FLOAT_EQ(s.data[i], 3.f * a.data[i]);
  auto sig = run_op<float>("sigmoid", {a}).at(0), th = run_op<float>("tanh", {a}).at(0),
       re = run_op<float>("relu", {a}).at(0);
  for (size_t i = 0; i < a.data.size(); ++i) {
    EXPECT_NEAR(sig.data[i], 1 / (1 + std::exp(-a.data[i])), 1e-6);
    EXPECT_NEAR(th.data[i], std::tanh(a.data[i]), 1e-6);
    EXPECT_EQ(re.data[i], std::max(0.f, a.data[i]));
  }
  // uint32 relu is the polynomial stand-in x*(x+1)+1, not a clamp.
  auto u = run_op<uint32_t>("relu", {HostTensor<uint32_t>{{2}, {0u, 5u}}}).at(0);
  EXPECT_EQ(u.data, (std::vector<uint32_t>{1u, 31u}));
}

}  // namespace
}  // namespace graphsub

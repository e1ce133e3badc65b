#include "opt/cost/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace graphsub::opt {

namespace {

constexpr int kTerms = 4;
using Row = std::array<double, kTerms>;

Row row_of(const CalibrationFeatures& f) {
  return {f.isolated_us, f.ops, f.megabytes, 1.0};
}

// Solves the weighted least-squares problem restricted to the terms in `mask`; false when
// the normal equations are singular.
bool solve_subset(const std::vector<Row>& x, const std::vector<double>& y, unsigned mask,
                  Row& coef) {
  std::vector<int> idx;
  for (int k = 0; k < kTerms; ++k)
    if (mask & (1u << k)) idx.push_back(k);
  size_t m = idx.size();
  std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0));
  for (size_t i = 0; i < x.size(); ++i) {
    double w = 1.0 / (y[i] * y[i]);  // relative error weighting
    for (size_t r = 0; r < m; ++r) {
      for (size_t c = 0; c < m; ++c) a[r][c] += w * x[i][idx[r]] * x[i][idx[c]];
      a[r][m] += w * x[i][idx[r]] * y[i];
    }
  }
  for (size_t c = 0; c < m; ++c) {  // Gaussian elimination with partial pivoting
    size_t p = c;
    for (size_t r = c + 1; r < m; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    if (std::fabs(a[p][c]) < 1e-300) return false;
    std::swap(a[p], a[c]);
    for (size_t r = 0; r < m; ++r) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (size_t k = c; k <= m; ++k) a[r][k] -= f * a[c][k];
    }
  }
  coef.fill(0);
  for (size_t r = 0; r < m; ++r) coef[idx[r]] = a[r][m] / a[r][r];
  return true;
}

}  // namespace

std::string Calibration::str() const {
  if (!fitted) return "uncalibrated (isolated operator times)";
  return fmt::format(
      "calibrated on {} end-to-end runs: {:.2f} x isolated + {:.1f} us/op + {:.1f} us/MB + {:.0f} "
      "us "
      "(median error {:.1f}%)",
      samples, scale, per_op_us, per_mb_us, per_graph_us, 100 * fit_error);
}

Calibration fit_calibration(const std::vector<CalibrationSample>& samples) {
  if (samples.size() < 2)
    throw Error(fmt::format("calibration needs at least 2 samples, got {}", samples.size()));
  std::vector<Row> x;
  std::vector<double> y;
  for (auto& s : samples) {
    if (!(s.measured_us > 0)) throw Error("calibration: a measured time is not positive");
    x.push_back(row_of(s.features));
    y.push_back(s.measured_us);
  }
  auto residual = [&](const Row& c) {
    double r = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double p = 0;
      for (int k = 0; k < kTerms; ++k) p += c[k] * x[i][k];
      r += (p - y[i]) * (p - y[i]) / (y[i] * y[i]);
    }
    return r;
  };
  // Non-negative least squares by trying every subset of active terms (4 terms: 15 subsets).
  Row best{1, 0, 0, 0};
  double best_r = residual(best);
  for (unsigned mask = 1; mask < (1u << kTerms); ++mask) {
    Row c;
    if (!solve_subset(x, y, mask, c)) continue;
    if (std::any_of(c.begin(), c.end(), [](double v) { return v < 0; })) continue;
    double r = residual(c);
    if (r < best_r) {
      best_r = r;
      best = c;
    }
  }
  Calibration cal;
  cal.fitted = true;
  cal.scale = best[0];
  cal.per_op_us = best[1];
  cal.per_mb_us = best[2];
  cal.per_graph_us = best[3];
  cal.samples = samples.size();
  std::vector<double> errs;
  for (auto& s : samples)
    errs.push_back(std::fabs(cal.predict(s.features) - s.measured_us) / s.measured_us);
  std::nth_element(errs.begin(), errs.begin() + static_cast<long>(errs.size() / 2), errs.end());
  cal.fit_error = errs[errs.size() / 2];
  return cal;
}

static std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) r[order[k]] = avg;
    i = j + 1;
  }
  return r;
}

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2)
    throw Error("rank correlation needs two series of equal length >= 2");
  auto ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return 0;
  return sab / std::sqrt(saa * sbb);
}

}  // namespace graphsub::opt

#pragma once
// Calibration of the measured cost model against end-to-end runs. Each sample is one graph:
// its features (sum of isolated operator times, operator count, megabytes moved) and its
// measured end-to-end time. A non-negative least-squares fit gives
//   predicted = scale * isolated_us + per_op_us * ops + per_mb_us * megabytes + per_graph_us.
#include <string>
#include <vector>

namespace graphsub::opt {

struct CalibrationFeatures {
  double isolated_us = 0;  // sum over operators run at run time
  double ops = 0;          // operators run at run time
  double megabytes = 0;    // bytes read and written by them / 1e6
};

struct Calibration {
  bool fitted = false;
  double scale = 1;
  double per_op_us = 0;
  double per_mb_us = 0;
  double per_graph_us = 0;
  size_t samples = 0;
  double fit_error = 0;  // median relative error of the fit on its samples

  double predict(const CalibrationFeatures& f) const {
    return scale * f.isolated_us + per_op_us * f.ops + per_mb_us * f.megabytes + per_graph_us;
  }
  std::string str() const;
};

struct CalibrationSample {
  CalibrationFeatures features;
  double measured_us = 0;
};

// Throws Error with fewer than 2 samples. Coefficients are kept non-negative (an active-set
// least squares over the four terms), relative errors weighted equally across samples.
Calibration fit_calibration(const std::vector<CalibrationSample>& samples);

// Spearman rank correlation of two equally long series (ties get average ranks).
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace graphsub::opt

// Timing helpers for kiln_bench: the median of repeated runs, with the
// repeat count chosen so that each measurement takes a fraction of a second.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace kiln::bench {

// Median seconds per call of fn, after warm-up calls (which also fill the
// oneDNN primitive caches).
inline double median_seconds(const std::function<void()>& fn, double budget_seconds = 0.3) {
  using clock = std::chrono::steady_clock;
  auto seconds_of = [&] {
    const auto start = clock::now();
    fn();
    return std::chrono::duration<double>(clock::now() - start).count();
  };
  for (int i = 0; i < 3; ++i) seconds_of();
  const double first = std::max(seconds_of(), 1e-9);
  const int repeats = std::clamp(int(budget_seconds / first), 5, 200);
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) samples.push_back(seconds_of());
  std::nth_element(samples.begin(), samples.begin() + repeats / 2, samples.end());
  return samples[size_t(repeats / 2)];
}

}  // namespace kiln::bench

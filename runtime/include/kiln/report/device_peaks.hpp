// What a device can do at best, for the training report's utilisation and
// advice: arithmetic peaks and memory. A CPU's f32 peak is measured (once
// per process) by a loop of independent fused multiply-adds on as many
// threads as kiln's pool has; a GPU's peaks come from a table of known
// cards by name (an unknown card has none) and its memory from the driver.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/device.hpp"

namespace kiln::report {

struct DevicePeaks {
  double f32_flops = 0.0;          // 0: unknown
  std::string fast_low_precision;  // "bf16" where the device computes it faster than f32; "" otherwise
  double low_precision_flops = 0.0;
  int64_t memory_bytes = 0;        // a GPU's memory; 0 for the CPU (shared with everything else)
};

// `threads`: the CPU threads kiln computes on (ignored for a GPU).
DevicePeaks device_peaks(Device device, int threads);

// The CPU's f32 FMA peak on `threads` threads, in FLOP/s: measured on the
// first call for each thread count, remembered after; 0 (unknown) on a CPU
// without FMA (AVX2 and FMA, or AVX-512).
double cpu_f32_peak(int threads);

}  // namespace kiln::report

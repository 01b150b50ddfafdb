// Device peaks: the CPU's measured, a GPU's from a table of known cards.
#include "kiln/report/device_peaks.hpp"

#include <dnnl.hpp>

#include "kiln/memory/cuda.hpp"

namespace kiln::report {
namespace {

// Dense peaks of the SXM or full parts, from their makers' data sheets:
// f32 without tensor cores, bf16 with them.
struct KnownGpu {
  const char* name_part;  // found in cudaDeviceProp::name
  double f32_tflops;
  double bf16_tflops;
};

constexpr KnownGpu kKnownGpus[] = {
    {"H200", 67.0, 989.0}, {"H100", 67.0, 989.0}, {"A100", 19.5, 312.0},
    {"L40S", 91.6, 362.0}, {"L4", 30.3, 121.0},   {"A10", 31.2, 125.0},
};

DevicePeaks gpu_peaks(int index) {
  const GpuProperties props = cuda_properties(index);
  DevicePeaks peaks;
  peaks.memory_bytes = props.memory_bytes;
  for (const KnownGpu& gpu : kKnownGpus) {
    if (props.name.find(gpu.name_part) == std::string::npos) continue;
    peaks.f32_flops = gpu.f32_tflops * 1e12;
    peaks.low_precision_flops = gpu.bf16_tflops * 1e12;
    break;
  }
  // Tensor cores compute bf16 from compute capability 8.0 (Ampere) on.
  if (props.compute_major >= 8) peaks.fast_low_precision = "bf16";
  return peaks;
}

// oneDNN computes bf16 faster than f32 only with AMX; AVX-512's bf16 dot
// products convert and run at about f32's rate (measured: bf16 training
// steps slower than f32 on such a CPU, in kiln and in PyTorch alike).
DevicePeaks cpu_peaks(int threads) {
  DevicePeaks peaks;
  peaks.f32_flops = cpu_f32_peak(threads);
  // ISA values are masks of features, each including those below it.
  const auto isa = unsigned(dnnl::get_effective_cpu_isa()), amx = unsigned(dnnl::cpu_isa::avx512_core_amx);
  if ((isa & amx) == amx) peaks.fast_low_precision = "bf16";
  return peaks;
}

}  // namespace

DevicePeaks device_peaks(Device device, int threads) {
  return device.is_cuda() ? gpu_peaks(device.index) : cpu_peaks(threads);
}

}  // namespace kiln::report

#include "train/run_report.hpp"

#include <algorithm>
#include <thread>

#include "convert.hpp"
#include "data/loader.hpp"
#include "handles.hpp"
#include "kiln/report/device_peaks.hpp"
#include "train/step_memory.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

// The memory the device can give: its cap when one is set, a GPU's size
// otherwise; 0 (unknown) for an uncapped CPU, whose limit is the machine's.
int64_t memory_capacity(const kiln_trainer& t, Device device, const report::DevicePeaks& peaks) {
  const kiln_memory_stats stats = memory_stats(t.config.runtime.get(), device);
  return stats.limit_bytes > 0 ? stats.limit_bytes : peaks.memory_bytes;
}

report::DevicePeaks model_device_peaks(const kiln_trainer& t, Device device) {
  return report::device_peaks(device, t.config.runtime.get()->runtime.thread_pool().num_workers());
}

double peak_at_precision(const kiln_trainer& t, const report::DevicePeaks& peaks) {
  return t.config.precision == KILN_F32 ? peaks.f32_flops : peaks.low_precision_flops;
}

report::RunSetup run_setup(const kiln_trainer& t) {
  report::RunSetup s;
  const Device device = model_device(t);
  const report::DevicePeaks peaks = model_device_peaks(t, device);
  const data::LoaderOptions& loader = t.config.train.get()->engine->options();
  s.device = to_string(device);
  s.on_gpu = device.is_cuda();
  s.loader_workers = loader.num_workers;
  s.loader_prefetch = loader.prefetch > 0 ? loader.prefetch : std::max(2, 2 * loader.num_workers);
  s.cpu_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  s.batch_size = loader.batch_size * t.config.accumulate;
  s.precision = dtype_name(abi::to_dtype(t.config.precision));
  s.fast_low_precision = peaks.fast_low_precision;
  s.low_precision_speedup = peaks.f32_flops > 0.0 ? peaks.low_precision_flops / peaks.f32_flops : 0.0;
  s.peak_flops = peak_at_precision(t, peaks);
  s.memory_capacity = memory_capacity(t, device, peaks);
  s.world_size = t.world_size;
  return s;
}

}  // namespace

double run_peak_flops(const kiln_trainer& t) {
  const Device device = model_device(t);
  return peak_at_precision(t, model_device_peaks(t, device));
}

void RunReport::add(const kiln_step_metrics& m) {
  if (seen_++ == 0) return;
  totals_.steps += 1;
  totals_.samples += m.samples;
  totals_.seconds += report::StepSplit{.input_wait = m.input_wait_seconds,
                                       .forward = m.forward_seconds,
                                       .backward = m.backward_seconds,
                                       .communication = m.communication_seconds,
                                       .optimizer = m.optimizer_seconds,
                                       .other = m.other_seconds};
  totals_.flops += m.flops;
  totals_.peak_bytes = std::max(totals_.peak_bytes, m.peak_gpu_bytes > 0 ? m.peak_gpu_bytes : m.peak_cpu_bytes);
}

std::string RunReport::text(const kiln_trainer& t) const {
  report::RunSetup setup = run_setup(t);
  setup.profiled_step = op_profile_;
  return report::format_report(totals_, setup);
}

}  // namespace kiln::train

#include "train/step_memory.hpp"

#include "train/trainer.hpp"

namespace kiln::train {
namespace {

void reset_peak(kiln_runtime* rt, Device device) {
  check_call(kiln_memory_reset_peak(rt, device.is_cpu() ? KILN_DEVICE_CPU : KILN_DEVICE_CUDA, device.index),
             device.is_cpu() ? "resetting the CPU memory peak" : "resetting the GPU memory peak");
}

}  // namespace

kiln_memory_stats memory_stats(kiln_runtime* rt, Device device) {
  kiln_memory_stats stats{};
  stats.size = sizeof stats;
  check_call(kiln_memory_stats_get(rt, device.is_cpu() ? KILN_DEVICE_CPU : KILN_DEVICE_CUDA, device.index, &stats),
             "reading the memory statistics");
  return stats;
}

Device model_device(const kiln_trainer& t) {
  kiln_device_type type = KILN_DEVICE_CPU;
  int index = 0;
  if (!t.params.empty())
    check_call(kiln_tensor_device(t.params.front().get(), &type, &index), "reading the model's device");
  return type == KILN_DEVICE_CPU ? Device::cpu() : Device::cuda(index);
}

// A model without parameters computes where its inputs are, which the
// CPU's peak covers for the CPU and nothing here follows on a GPU.
StepMemory::StepMemory(const kiln_trainer& t, Device device)
    : runtime_(t.config.runtime.get()), model_device_(device) {
  reset_peak(runtime_, Device::cpu());
  if (!model_device_.is_cpu()) reset_peak(runtime_, model_device_);
}

void StepMemory::finish(kiln_step_metrics& m) const {
  m.peak_cpu_bytes = memory_stats(runtime_, Device::cpu()).peak_bytes;
  m.peak_gpu_bytes = model_device_.is_cpu() ? 0 : memory_stats(runtime_, model_device_).peak_bytes;
}

}  // namespace kiln::train

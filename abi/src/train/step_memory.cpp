#include "train/step_memory.hpp"

#include "train/trainer.hpp"

namespace kiln::train {
namespace {

int64_t peak_bytes(kiln_runtime* rt, kiln_device_type device, int index) {
  kiln_memory_stats stats{};
  stats.size = sizeof stats;
  check_call(kiln_memory_stats_get(rt, device, index, &stats), "reading the memory statistics");
  return stats.peak_bytes;
}

}  // namespace

StepMemory::StepMemory(const kiln_trainer& t) : runtime_(t.config.runtime.get()) {
  // The model's first parameter says where it lives; a model without
  // parameters computes where its inputs are, which the CPU's peak covers
  // for the CPU and nothing here follows on a GPU.
  if (!t.params.empty())
    check_call(kiln_tensor_device(t.params.front().get(), &model_device_, &model_device_index_),
               "reading the model's device");
  check_call(kiln_memory_reset_peak(runtime_, KILN_DEVICE_CPU, 0), "resetting the CPU memory peak");
  if (model_device_ != KILN_DEVICE_CPU)
    check_call(kiln_memory_reset_peak(runtime_, model_device_, model_device_index_), "resetting the GPU memory peak");
}

void StepMemory::finish(kiln_step_metrics& m) const {
  m.peak_cpu_bytes = peak_bytes(runtime_, KILN_DEVICE_CPU, 0);
  m.peak_gpu_bytes =
      model_device_ == KILN_DEVICE_CPU ? 0 : peak_bytes(runtime_, model_device_, model_device_index_);
}

}  // namespace kiln::train

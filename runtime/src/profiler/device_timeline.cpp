#include "kiln/profiler/device_timeline.hpp"

#include "kiln/memory/cuda.hpp"

namespace kiln {

std::unique_ptr<DeviceTimeline> make_device_timeline(Device device) {
  if (device.is_cpu()) return nullptr;
  return make_cuda_timeline(device.index);
}

}  // namespace kiln

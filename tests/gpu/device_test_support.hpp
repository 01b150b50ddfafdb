// Helpers for device tests: skipping visibly without a GPU, moving tensors
// between devices, and reading a tensor's bytes for bit-exact comparisons.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln::test {

// Catch2 v2 cannot mark a test skipped: without a GPU a test reports why as a
// warning and returns, so the skip shows in the output.
inline bool skip_without_gpu(const Runtime& rt) {
  if (rt.devices().cuda_device_count > 0) return false;
  WARN("skipped: no GPU: " << rt.devices().cuda_unavailable_reason);
  return true;
}

inline Tensor to_device(Runtime& rt, const Tensor& t, Device device) {
  return rt.call1("to", {t}, {{"device", to_string(device)}});
}

// The elements' bytes in row-major order, read on the host.
inline std::vector<uint8_t> host_bytes(Runtime& rt, const Tensor& t) {
  const Tensor host = to_device(rt, t, Device::cpu());
  std::vector<uint8_t> bytes(host.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), host.raw_data(), bytes.size());
  return bytes;
}

}  // namespace kiln::test

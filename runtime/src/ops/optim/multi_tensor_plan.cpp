#include "kiln/ops/multi_tensor_plan.hpp"

#include <limits>

#include "kiln/error.hpp"

namespace kiln {

std::vector<MultiTensorLaunch> plan_multi_tensor(std::span<const int64_t> numels, const MultiTensorLimits& limits) {
  KILN_CHECK(limits.max_tensors > 0 && limits.max_blocks > 0 && limits.chunk > 0, Status::invalid_argument,
             "multi-tensor plan: limits must be positive (", limits.max_tensors, " tensors, ", limits.max_blocks,
             " blocks, chunks of ", limits.chunk, ")");
  std::vector<MultiTensorLaunch> launches;
  MultiTensorLaunch current;
  const auto flush = [&] {
    if (current.blocks.empty()) return;
    launches.push_back(std::move(current));
    current = {};
  };
  for (size_t i = 0; i < numels.size(); ++i) {
    const int64_t chunks = (numels[i] + limits.chunk - 1) / limits.chunk;
    KILN_CHECK(chunks <= std::numeric_limits<int32_t>::max(), Status::invalid_argument, "multi-tensor plan: tensor ",
               i, " has ", numels[i], " elements, more than ", std::numeric_limits<int32_t>::max(), " chunks of ",
               limits.chunk);
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      if (chunk == 0) {
        if (int(current.tensors.size()) == limits.max_tensors) flush();
        current.tensors.push_back(i);
      }
      current.blocks.push_back({int(current.tensors.size()) - 1, int32_t(chunk)});
      if (int(current.blocks.size()) == limits.max_blocks) {
        // A tensor with chunks left starts the next launch.
        const bool more = chunk + 1 < chunks;
        flush();
        if (more) current.tensors.push_back(i);
      }
    }
  }
  flush();
  return launches;
}

}  // namespace kiln

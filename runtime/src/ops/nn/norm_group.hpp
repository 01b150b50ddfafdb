// The layout shared by group_norm's CPU and CUDA kernels: an input
// [N, C, ...] seen as rows, one per (sample, group), each holding the
// contiguous C / num_groups channels of that group with their `inner`
// trailing elements (the product of the dims after C).
#pragma once

#include <cstdint>

#include "kiln/ops/op_def.hpp"
#include "kiln/util/host_device.hpp"

namespace kiln::nn {

struct GroupLayout {
  int64_t samples = 0, channels = 0, groups = 1, inner = 1;

  KILN_HOST_DEVICE int64_t rows() const { return samples * groups; }
  KILN_HOST_DEVICE int64_t group_channels() const { return channels / groups; }
  KILN_HOST_DEVICE int64_t row_size() const { return group_channels() * inner; }
  // The channel of element k of row r.
  KILN_HOST_DEVICE int64_t channel(int64_t r, int64_t k) const {
    return (r % groups) * group_channels() + k / inner;
  }
  // Values per channel, and where the j-th of channel ch lies, and its row.
  KILN_HOST_DEVICE int64_t channel_count() const { return samples * inner; }
  KILN_HOST_DEVICE int64_t channel_offset(int64_t ch, int64_t j) const {
    return ((j / inner) * channels + ch) * inner + j % inner;
  }
  KILN_HOST_DEVICE int64_t channel_row(int64_t ch, int64_t j) const {
    return (j / inner) * groups + ch / group_channels();
  }
};

// Reads num_groups from the attributes of `op` (group_norm or its backward)
// and checks it against an input of shape `input`; throws naming the op.
GroupLayout group_layout(const OpDef& op, const Attrs& attrs, const Shape& input);

}  // namespace kiln::nn

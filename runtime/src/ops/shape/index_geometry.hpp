// Where index_select reads and index_add writes, shared by the CPU and the
// CUDA kernels. Both see the input as [outer, size, inner] around `dim`,
// and the selected (or added) tensor as [outer, count, inner], where count
// is the number of indices.
#pragma once

#include <cstdint>

#include "kiln/ops/op_def.hpp"
#include "kiln/util/host_device.hpp"

namespace kiln::shape {

struct AlongDim {
  int64_t outer = 1, size = 1, inner = 1, count = 0;

  // The input offset of element e of the [outer, count, inner] tensor, with
  // `index` the index at its position j along dim.
  KILN_HOST_DEVICE int64_t input_offset(int64_t e, int64_t index) const {
    const int64_t o = e / (count * inner), i = e % inner;
    return (o * size + index) * inner + i;
  }
  // Element e's position j along dim (which index it uses).
  KILN_HOST_DEVICE int64_t position(int64_t e) const { return (e / inner) % count; }
};

// The geometry of index_select / index_add on `input` with the op's dim.
AlongDim along_dim(const OpDef& op, const Attrs& attrs, const Shape& input, int64_t count);

// The message for an index outside [0, size) of dim.
[[noreturn]] void throw_index_out_of_range(const OpDef& op, int64_t index, int dim, int64_t size);

}  // namespace kiln::shape

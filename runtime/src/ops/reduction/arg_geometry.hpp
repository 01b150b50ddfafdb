// The reduction geometry of max_dim, min_dim, argmax and argmin, shared by
// their CPU and CUDA kernels.
#pragma once

#include "reduce_geometry.hpp"

namespace kiln::reduction {

// max_dim and min_dim reduce their integer "dim"; argmax and argmin their
// "dim" list of at most one entry (empty: every dim, so the index counts
// through the flattened tensor). Reads the input in its own layout.
ReduceGeometry arg_geometry(const OpDef& op, const Tensor& input, const Attrs& attrs);

}  // namespace kiln::reduction

// eq, ne, lt, le, gt, ge: element-wise comparisons of two tensors of one
// dtype (any), broadcast together, giving bool tensors (torch.eq and
// friends). NaN compares as IEEE says: unequal to everything, itself too.
// Comparisons carry no gradient.
#include "binary_functions.hpp"
#include "binary_map.hpp"

namespace kiln::elementwise {

void register_compare_ops(OpRegistry& r) {
  r.add(bool_binary_op<EqFn>("eq"));
  r.add(bool_binary_op<NeFn>("ne"));
  r.add(bool_binary_op<LtFn>("lt"));
  r.add(bool_binary_op<LeFn>("le"));
  r.add(bool_binary_op<GtFn>("gt"));
  r.add(bool_binary_op<GeFn>("ge"));
}

}  // namespace kiln::elementwise

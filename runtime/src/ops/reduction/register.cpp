#include "kiln/kernels/builtin_ops.hpp"

namespace kiln {

void register_reduction_ops(OpRegistry&) {}

}  // namespace kiln

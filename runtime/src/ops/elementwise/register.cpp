#include "kiln/kernels/builtin_ops.hpp"

namespace kiln {

void register_elementwise_ops(OpRegistry&) {}

}  // namespace kiln

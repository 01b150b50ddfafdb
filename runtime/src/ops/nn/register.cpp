#include "kiln/kernels/builtin_ops.hpp"

namespace kiln {

void register_nn_ops(OpRegistry&) {}

}  // namespace kiln

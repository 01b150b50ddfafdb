#include "kiln/kernels/builtin_ops.hpp"

namespace kiln {

void register_device_ops(OpRegistry&) {}

}  // namespace kiln

#include "kiln/kernels/builtin_ops.hpp"
#include "elementwise_common.hpp"

namespace kiln {

void register_elementwise_ops(OpRegistry& r) {
  elementwise::register_binary_ops(r);
  elementwise::register_compare_ops(r);
  elementwise::register_logical_ops(r);
  elementwise::register_unary_ops(r);
  elementwise::register_where_op(r);
  elementwise::register_cast_op(r);
  elementwise::register_creation_ops(r);
  elementwise::register_random_ops(r);
  elementwise::register_dropout_ops(r);
}

}  // namespace kiln

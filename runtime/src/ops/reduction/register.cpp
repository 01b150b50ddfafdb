#include "families.hpp"
#include "kiln/kernels/builtin_ops.hpp"

namespace kiln {

void register_reduction_ops(OpRegistry& r) {
  reduction::register_reduce_ops(r);
  reduction::register_arg_reduce_ops(r);
  reduction::register_logical_reduce_ops(r);
  reduction::register_product_ops(r);
  reduction::register_norm_ops(r);
  reduction::register_sort_ops(r);
  reduction::register_softmax_ops(r);
  reduction::register_class_loss_ops(r);
  reduction::register_pointwise_loss_ops(r);
  reduction::register_index_ops(r);
  reduction::register_concat_split_ops(r);
}

}  // namespace kiln

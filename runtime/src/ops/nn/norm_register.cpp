#include "nn_ops.hpp"
#include "norm_ops.hpp"

namespace kiln {

void register_norm_ops(OpRegistry& r) {
  nn::register_batch_norm_ops(r);
  nn::register_layer_norm_ops(r);
  nn::register_group_norm_ops(r);
  nn::register_instance_norm_op(r);
}

}  // namespace kiln

#include "kiln/kernels/builtin_ops.hpp"
#include "nn_ops.hpp"

namespace kiln {

void register_nn_ops(OpRegistry& r) {
  register_matmul_ops(r);
  register_conv_ops(r);
  register_conv1d_op(r);
  register_conv_transpose2d_op(r);
  register_attention_ops(r);
  register_pool_ops(r);
  register_norm_ops(r);
  register_upsample_ops(r);
  register_lstm_ops(r);
  register_bmm_ops(r);
}

}  // namespace kiln

// Registration functions of the neural-network op family; register_nn_ops
// (register.cpp) calls each in turn.
#pragma once

namespace kiln {

class OpRegistry;

void register_matmul_ops(OpRegistry& r);  // matmul, linear and their backward ops
void register_linear_op(OpRegistry& r);   // linear; called by register_matmul_ops
void register_conv_ops(OpRegistry& r);    // conv2d and its backward ops
void register_conv1d_op(OpRegistry& r);   // conv1d, on conv2d's kernels
void register_conv_transpose2d_op(OpRegistry& r);  // conv_transpose2d, on conv2d's kernels
void register_attention_ops(OpRegistry& r);  // scaled_dot_product_attention and its backward
void register_pool_ops(OpRegistry& r);    // pooling
void register_norm_ops(OpRegistry& r);    // normalisation
void register_upsample_ops(OpRegistry& r);  // upsample_nearest2d, upsample_bilinear2d and their backward ops
void register_lstm_ops(OpRegistry& r);      // lstm_recurrence and its backward
void register_bmm_ops(OpRegistry& r);       // bmm, baddbmm (after matmul, whose kernels they run)

}  // namespace kiln

// The op families built into every runtime. Runtime's constructor calls each
// registration function in turn; there is no static self-registration.
#pragma once

namespace kiln {

class OpRegistry;

void register_core_ops(OpRegistry& r);         // copy, full, sum_to
void register_view_ops(OpRegistry& r);         // reshape, permute, transpose, slice, expand
void register_elementwise_ops(OpRegistry& r);  // arithmetic, activations, where, clamp, cast, random
void register_reduction_ops(OpRegistry& r);    // sum, mean, max, var, softmax, losses, indexing
void register_shape_ops(OpRegistry& r);        // flip, roll, repeat, pad, tril, masked_fill, squeeze, ...
void register_nn_ops(OpRegistry& r);           // matmul, linear, conv, pooling, normalisation
void register_device_ops(OpRegistry& r);       // copies between devices
void register_optim_ops(OpRegistry& r);        // fused optimizer updates (sgd_update, adam_update)

inline void register_builtin_ops(OpRegistry& r) {
  register_core_ops(r);
  register_view_ops(r);
  register_elementwise_ops(r);
  register_reduction_ops(r);
  register_shape_ops(r);
  register_nn_ops(r);
  register_device_ops(r);
  register_optim_ops(r);
}

}  // namespace kiln

// The groups of ops this folder registers; register.cpp calls each in turn.
#pragma once

#include "kiln/ops/registry.hpp"

namespace kiln::reduction {

void register_reduce_ops(OpRegistry& r);         // sum, mean, max, min, var, std
void register_arg_reduce_ops(OpRegistry& r);     // max_dim, min_dim, argmax, argmin
void register_logical_reduce_ops(OpRegistry& r); // any, all
void register_product_ops(OpRegistry& r);        // prod, cumsum
void register_norm_ops(OpRegistry& r);           // norm, logsumexp
void register_sort_ops(OpRegistry& r);           // sort, argsort, topk
void register_softmax_ops(OpRegistry& r);        // softmax, log_softmax
void register_class_loss_ops(OpRegistry& r);     // cross_entropy, nll_loss
void register_pointwise_loss_ops(OpRegistry& r); // mse_loss, bce_with_logits
void register_index_ops(OpRegistry& r);          // embedding, gather
void register_concat_split_ops(OpRegistry& r);   // concat, split

}  // namespace kiln::reduction

// Kernels of the CUDA build for ops the core defines. register_device_ops
// calls these in a CUDA build only (after the core ops exist); they add
// kernels to existing ops and define none.
#pragma once

namespace kiln {

class OpRegistry;

void register_cuda_fill_kernels(OpRegistry& r);  // "full", every dtype
void register_cuda_copy_kernels(OpRegistry& r);  // "copy", every dtype
void register_cuda_matmul_kernels(OpRegistry& r);  // "matmul", "linear" (cuBLASLt)
void register_cuda_conv_kernels(OpRegistry& r);    // "conv2d" and its backward ops (cuDNN)
void register_cuda_batch_norm_kernels(OpRegistry& r);  // "batch_norm", "batch_norm_backward"
void register_cuda_pool_kernels(OpRegistry& r);  // max, average and adaptive average pooling, and backward
// The element-wise, reduction and normalisation ops, in the dtypes their CPU
// kernels cover.
void register_cuda_unary_kernels(OpRegistry& r);     // relu, gelu, abs, floor, ... and their *_backward ops
void register_cuda_binary_kernels(OpRegistry& r);    // add, sub, mul, div, minimum, maximum, remainder, *_scalar
void register_cuda_compare_kernels(OpRegistry& r);   // eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_not
void register_cuda_where_kernels(OpRegistry& r);     // where
void register_cuda_cast_kernels(OpRegistry& r);      // cast
void register_cuda_creation_kernels(OpRegistry& r);  // zeros, ones, fill, arange
void register_cuda_random_kernels(OpRegistry& r);    // rand, randn, dropout, dropout_backward
void register_cuda_reduce_kernels(OpRegistry& r);    // sum, mean, max, min, var, std, sum_to and backward ops
void register_cuda_arg_reduce_kernels(OpRegistry& r);      // max_dim, min_dim, argmax, argmin
void register_cuda_logical_reduce_kernels(OpRegistry& r);  // any, all
void register_cuda_product_kernels(OpRegistry& r);         // prod, cumsum and backward ops
void register_cuda_norm_kernels(OpRegistry& r);            // norm, logsumexp and backward ops
void register_cuda_sort_kernels(OpRegistry& r);            // sort, argsort, topk
void register_cuda_softmax_kernels(OpRegistry& r);   // softmax, log_softmax and backward ops
void register_cuda_loss_kernels(OpRegistry& r);      // mse_loss, bce_with_logits, cross_entropy, nll_loss (+ backward)
void register_cuda_layer_norm_kernels(OpRegistry& r);  // layer_norm, layer_norm_backward
void register_cuda_index_kernels(OpRegistry& r);       // embedding, gather and backward ops
void register_cuda_concat_split_kernels(OpRegistry& r);  // concat, split, slice_grad
void register_cuda_group_norm_kernels(OpRegistry& r);    // group_norm, group_norm_backward
void register_cuda_upsample_kernels(OpRegistry& r);      // upsample_nearest2d, upsample_bilinear2d and backward ops

}  // namespace kiln

#include "device_ops.hpp"
#include "kiln/kernels/builtin_ops.hpp"

#ifdef KILN_WITH_CUDA
#include "../../kernels/cuda/cuda_kernels.hpp"
#include "../nn/kernel_of.hpp"
#endif

namespace kiln {

void register_device_ops(OpRegistry& r) {
  register_to_op(r);
#ifdef KILN_WITH_CUDA
  // The core defines the ops with CPU kernels; the CUDA build adds its own
  // for the same ops.
  register_cuda_fill_kernels(r);
  register_cuda_copy_kernels(r);
  register_cuda_matmul_kernels(r);
  register_cuda_conv_kernels(r);
  register_cuda_batch_norm_kernels(r);
  register_cuda_pool_kernels(r);
  register_cuda_unary_kernels(r);
  register_cuda_binary_kernels(r);
  register_cuda_compare_kernels(r);
  register_cuda_where_kernels(r);
  register_cuda_cast_kernels(r);
  register_cuda_creation_kernels(r);
  register_cuda_random_kernels(r);
  register_cuda_reduce_kernels(r);
  register_cuda_arg_reduce_kernels(r);
  register_cuda_logical_reduce_kernels(r);
  register_cuda_product_kernels(r);
  register_cuda_norm_kernels(r);
  register_cuda_sort_kernels(r);
  register_cuda_softmax_kernels(r);
  register_cuda_loss_kernels(r);
  register_cuda_layer_norm_kernels(r);
  register_cuda_index_kernels(r);
  register_cuda_concat_split_kernels(r);
  register_cuda_group_norm_kernels(r);
  register_cuda_upsample_kernels(r);
  // Last: ops that run other ops' kernels take the CUDA dtypes those have.
  nn::register_cuda_mirrored_kernels(r);
#endif
}

}  // namespace kiln

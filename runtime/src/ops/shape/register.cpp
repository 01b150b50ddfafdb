#include "families.hpp"
#include "kiln/kernels/builtin_ops.hpp"

namespace kiln {

void register_shape_ops(OpRegistry& r) {
  shape::register_view_ops(r);
  shape::register_remap_ops(r);
  shape::register_masked_fill_ops(r);
  shape::register_index_ops(r);
  shape::register_scatter_ops(r);
  shape::register_stack_chunk_ops(r);
  shape::register_one_hot_ops(r);
  shape::register_prelu_ops(r);
#ifdef KILN_WITH_CUDA
  shape::register_cuda_remap_kernels(r);
  shape::register_cuda_masked_fill_kernels(r);
  shape::register_cuda_select_scatter_kernels(r);
  shape::register_cuda_prelu_kernels(r);
#endif
}

}  // namespace kiln

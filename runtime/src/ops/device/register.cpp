#include "device_ops.hpp"
#include "kiln/kernels/builtin_ops.hpp"

#ifdef KILN_WITH_CUDA
#include "../../kernels/cuda/cuda_kernels.hpp"
#endif

namespace kiln {

void register_device_ops(OpRegistry& r) {
  register_to_op(r);
#ifdef KILN_WITH_CUDA
  // The core defines "full" and "copy" with CPU kernels; the CUDA build adds
  // its own for the same ops.
  register_cuda_fill_kernels(r);
  register_cuda_copy_kernels(r);
#endif
}

}  // namespace kiln

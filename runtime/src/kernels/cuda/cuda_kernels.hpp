// Kernels of the CUDA build for ops the core defines. register_device_ops
// calls these in a CUDA build only (after the core ops exist); they add
// kernels to existing ops and define none.
#pragma once

namespace kiln {

class OpRegistry;

void register_cuda_fill_kernels(OpRegistry& r);  // "full", every dtype
void register_cuda_copy_kernels(OpRegistry& r);  // "copy", every dtype

}  // namespace kiln

// The stream kiln's GPU work is queued on. Everything runs on the legacy
// default stream for now, which orders kernels, library calls (cuBLAS,
// cuDNN) and the synchronous copies of cuda_copy without events; a copy
// stream for input batches waits on events of its own. Kernels and library
// handles take their stream from here, so the choice changes in one place.
#pragma once

#include <cuda_runtime.h>

namespace kiln::cuda {

inline cudaStream_t compute_stream(int /*device*/) { return cudaStream_t{}; }

}  // namespace kiln::cuda

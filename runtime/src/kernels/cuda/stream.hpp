// The stream kiln's GPU work is queued on. Kernels and library calls
// (cuBLAS, cuDNN) run on the legacy default stream, which orders them and
// the synchronous copies of cuda_copy without events. Input batches travel
// on a non-blocking copy stream of their own (memory/cuda/
// cuda_transfer_queue.cpp), which this stream waits for through events.
// Kernels and library handles take their stream from here, so the choice
// changes in one place.
#pragma once

#include <cuda_runtime.h>

namespace kiln::cuda {

inline cudaStream_t compute_stream(int /*device*/) { return cudaStream_t{}; }

}  // namespace kiln::cuda

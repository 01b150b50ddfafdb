// KILN_HOST_DEVICE marks a function that the CPU kernels and the CUDA
// kernels both compile: formulas written once, so that both devices compute
// the same thing. Outside nvcc it expands to nothing.
#pragma once

#ifdef __CUDACC__
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

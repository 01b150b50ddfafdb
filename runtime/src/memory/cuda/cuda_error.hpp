// Turning CUDA runtime results into kiln::Error. Every CUDA call in kiln is
// checked through KILN_CUDA_CHECK (or throw_cuda_error), so a failure reaches
// the host as an error code and a message naming what was asked and the CUDA
// error, never as an abort.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "kiln/error.hpp"

namespace kiln {

// "cudaErrorInsufficientDriver: CUDA driver version is insufficient ..."
std::string cuda_error_text(cudaError_t err);

// Clears CUDA's last-error slot and throws Error(status) with
// "<what> failed (<cuda_error_text>)".
[[noreturn]] void throw_cuda_error(cudaError_t err, Status status, const std::string& what);

}  // namespace kiln

// KILN_CUDA_CHECK(cudaMemcpy(...), "copying ", n, " bytes") throws
// Error(internal) when the call fails; the message is only built then.
#define KILN_CUDA_CHECK(call, ...)                                                                      \
  do {                                                                                                  \
    const cudaError_t kiln_cuda_err_ = (call);                                                          \
    if (kiln_cuda_err_ != cudaSuccess)                                                                  \
      ::kiln::throw_cuda_error(kiln_cuda_err_, ::kiln::Status::internal, ::kiln::str_cat(__VA_ARGS__)); \
  } while (0)

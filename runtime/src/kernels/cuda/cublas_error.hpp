// Turning cuBLASLt statuses into kiln::Error, as cuda_error.hpp does for the
// CUDA runtime: a failed call reaches the host as an error naming what was
// asked and the library's own description, never as an abort.
#pragma once

#include <cublasLt.h>

#include "kiln/error.hpp"

#define KILN_CUBLAS_CHECK(call, ...)                                                                      \
  do {                                                                                                    \
    const cublasStatus_t kiln_cublas_status_ = (call);                                                    \
    if (kiln_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                                     \
      ::kiln::throw_error(::kiln::Status::internal,                                                       \
                          ::kiln::str_cat(__VA_ARGS__, " failed (", cublasLtGetStatusName(kiln_cublas_status_), \
                                          ": ", cublasLtGetStatusString(kiln_cublas_status_), ")"));      \
  } while (0)

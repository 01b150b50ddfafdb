// Turning cuDNN statuses into kiln::Error, as cuda_error.hpp does for the
// CUDA runtime: a failed call reaches the host as an error naming what was
// asked and cuDNN's own description, never as an abort.
#pragma once

#include <cudnn.h>

#include "kiln/error.hpp"

#define KILN_CUDNN_CHECK(call, ...)                                                                  \
  do {                                                                                               \
    const cudnnStatus_t kiln_cudnn_status_ = (call);                                                 \
    if (kiln_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                                  \
      ::kiln::throw_error(::kiln::Status::internal,                                                  \
                          ::kiln::str_cat(__VA_ARGS__, " failed (", cudnnGetErrorString(kiln_cudnn_status_), ")")); \
  } while (0)

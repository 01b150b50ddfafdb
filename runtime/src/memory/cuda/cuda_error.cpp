#include "cuda_error.hpp"

namespace kiln {

std::string cuda_error_text(cudaError_t err) {
  return str_cat(cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

void throw_cuda_error(cudaError_t err, Status status, const std::string& what) {
  // Non-sticky errors stay in the last-error slot; clear it so the next,
  // unrelated check does not report this failure again.
  cudaGetLastError();
  throw_error(status, str_cat(what, " failed (", cuda_error_text(err), ")"));
}

}  // namespace kiln

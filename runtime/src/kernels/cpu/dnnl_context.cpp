// Executing on the runtime's oneDNN stream, with oneDNN's OpenMP pool bounded
// by the runtime's thread count.
#include <omp.h>

#include "kiln/kernels/dnnl_context.hpp"

namespace kiln {

std::unique_lock<std::mutex> DnnlContext::lock_for_execution() {
  std::unique_lock lock(execute_mutex_);
  // OpenMP's thread count is a setting of the calling thread (ops run on the
  // host's threads, any of them), and it is cheap to set: set it every time.
  omp_set_num_threads(num_threads_);
  return lock;
}

}  // namespace kiln

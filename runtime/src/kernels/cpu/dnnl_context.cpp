// Executing on the runtime's oneDNN stream, with oneDNN's OpenMP pool bounded
// by the runtime's thread count.
#include <omp.h>

#include "kiln/kernels/dnnl_context.hpp"

#include "kiln/kernels/cpu/strided.hpp"

namespace kiln {

static_assert(DnnlContext::kSerialWork == cpu::kElementGrain, "oneDNN's serial work is the grain of kiln's loops");

std::unique_lock<std::mutex> DnnlContext::lock_for_execution(int64_t work) {
  std::unique_lock lock(execute_mutex_);
  // OpenMP's thread count is a setting of the calling thread (ops run on the
  // host's threads, any of them), and it is cheap to set: set it every time.
  // With one thread oneDNN runs the primitive inline, without a parallel region.
  omp_set_num_threads(work < kSerialWork ? 1 : num_threads_);
  return lock;
}

void DnnlContext::execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args,
                          int64_t work) {
  const auto lock = lock_for_execution(work);
  prim.execute(stream_, args);
  stream_.wait();
}

}  // namespace kiln

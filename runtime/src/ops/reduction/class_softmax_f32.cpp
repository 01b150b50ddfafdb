#include "class_softmax_f32.hpp"

#include <algorithm>
#include <cmath>

#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/kernels/cpu/vector_isa.hpp"
#include "kiln/kernels/cpu/vector_math.hpp"

namespace kiln::reduction {
namespace {

// Positions along D taken together: their maxima and sums stay in L1.
constexpr int64_t kChunk = 64;

// Sample n's positions [d0, d0 + w) of D: the maximum over the classes,
// exp(x - max) (kept in out) and its sum, then out as softmax or
// log-softmax. The log of a sum is taken once per position, not per class.
[[gnu::always_inline]] inline void chunk(const float* x, int64_t classes, int64_t inner, int64_t w, bool log,
                                         float* __restrict out) {
  float max[kChunk], sum[kChunk];
  std::copy(x, x + w, max);
  for (int64_t k = 1; k < classes; ++k)
    for (int64_t d = 0; d < w; ++d) max[d] = max[d] < x[k * inner + d] ? x[k * inner + d] : max[d];
  std::fill(sum, sum + w, 0.0f);
  for (int64_t k = 0; k < classes; ++k)
    for (int64_t d = 0; d < w; ++d) {
      const float e = cpu::exp_f32(x[k * inner + d] - max[d]);
      out[k * inner + d] = e;
      sum[d] += e;
    }
  if (log) {
    for (int64_t d = 0; d < w; ++d) max[d] += std::log(sum[d]);  // the log-sum-exp
    for (int64_t k = 0; k < classes; ++k)
      for (int64_t d = 0; d < w; ++d) out[k * inner + d] = x[k * inner + d] - max[d];
    return;
  }
  for (int64_t d = 0; d < w; ++d) sum[d] = 1.0f / sum[d];
  for (int64_t k = 0; k < classes; ++k)
    for (int64_t d = 0; d < w; ++d) out[k * inner + d] *= sum[d];
}

using ChunkFn = void (*)(const float*, int64_t, int64_t, int64_t, bool, float*);

void chunk_plain(const float* x, int64_t c, int64_t inner, int64_t w, bool log, float* out) {
  chunk(x, c, inner, w, log, out);
}
#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void chunk_avx2(const float* x, int64_t c, int64_t inner, int64_t w, bool log,
                                                    float* out) {
  chunk(x, c, inner, w, log, out);
}
__attribute__((target("avx512f,avx512dq,fma"))) void chunk_avx512(const float* x, int64_t c, int64_t inner, int64_t w,
                                                                  bool log, float* out) {
  chunk(x, c, inner, w, log, out);
}
#endif

ChunkFn chunk_for_cpu() {
#if defined(__x86_64__)
  return cpu::for_this_cpu<ChunkFn>(chunk_plain, chunk_avx2, chunk_avx512);
#else
  return chunk_plain;
#endif
}

}  // namespace

void class_softmax_f32(Runtime& rt, const float* x, int64_t n, int64_t classes, int64_t inner, bool log, float* out) {
  static const ChunkFn run = chunk_for_cpu();
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, classes * kChunk));
  rt.thread_pool().parallel_for(n * chunks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t sample = i / chunks, d0 = (i % chunks) * kChunk;
      const int64_t at = sample * classes * inner + d0;
      run(x + at, classes, inner, std::min(kChunk, inner - d0), log, out + at);
    }
  });
}

}  // namespace kiln::reduction

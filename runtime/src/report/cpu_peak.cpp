// The CPU's f32 peak, measured: each thread runs chains of independent
// fused multiply-adds in the widest vectors the CPU has, a few milliseconds
// long, best of three. Each thread's rate is its FLOPs over its own CPU
// time, so that a machine busy with other work (the time its threads wait
// for a core) does not lower the figure; the peak is the sum of the
// threads' rates. That is what the cores can do when nothing waits for
// memory, the figure utilisation is measured against.
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "kiln/report/device_peaks.hpp"

namespace kiln::report {
namespace {

// Independent accumulators, enough to cover the FMA latency on two ports;
// the inner loops are unrolled so that they stay in registers.
constexpr int kChains = 12;
constexpr int64_t kRounds = 1 << 21;  // a few milliseconds at full clock

// Each returns the FLOPs it did; `sink` keeps the work from being optimised
// away. The two differ only in their vector width: their intrinsics cannot
// be shared by one template, each compiled for its own instruction set.
__attribute__((target("avx512f,fma"))) double fma_avx512(float* sink) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < kRounds; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  float lanes[16];
  for (int c = 1; c < kChains; ++c) acc[0] = _mm512_add_ps(acc[0], acc[c]);
  _mm512_storeu_ps(lanes, acc[0]);
  *sink = lanes[0];
  return 2.0 * 16 * kChains * double(kRounds);
}

__attribute__((target("avx2,fma"))) double fma_avx2(float* sink) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(float(c));
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < kRounds; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, shift);
  float lanes[8];
  for (int c = 1; c < kChains; ++c) acc[0] = _mm256_add_ps(acc[0], acc[c]);
  _mm256_storeu_ps(lanes, acc[0]);
  *sink = lanes[0];
  return 2.0 * 8 * kChains * double(kRounds);
}

// The loop of the widest FMA the CPU has; null without FMA (peak unknown).
double (*widest_loop())(float*) {
  if (__builtin_cpu_supports("avx512f")) return fma_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return fma_avx2;
  return nullptr;
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// FLOP/s of `loop` on the calling thread, over its CPU time.
double thread_rate(double (*loop)(float*)) {
  float sink = 0.0f;
  const double start = thread_cpu_seconds();
  const double flops = loop(&sink);
  const double seconds = thread_cpu_seconds() - start;
  return seconds > 0.0 && sink == sink ? flops / seconds : 0.0;
}

double measure(int threads) {
  double (*loop)(float*) = widest_loop();
  if (!loop) return 0.0;
  double best = 0.0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<double> rates(static_cast<size_t>(threads));
    {
      std::vector<std::jthread> workers;
      for (int i = 0; i < threads; ++i) workers.emplace_back([&, i] { rates[size_t(i)] = thread_rate(loop); });
    }
    double total = 0.0;
    for (double r : rates) total += r;
    best = std::max(best, total);
  }
  return best;
}

}  // namespace

double cpu_f32_peak(int threads) {
  static std::mutex mutex;
  static std::map<int, double> measured;
  threads = std::max(1, threads);
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = measured.find(threads);
  if (it == measured.end()) it = measured.emplace(threads, measure(threads)).first;
  return it->second;
}

}  // namespace kiln::report

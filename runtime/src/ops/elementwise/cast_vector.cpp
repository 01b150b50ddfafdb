// The kernels are compiled for their instruction sets with target
// attributes (the rest of kiln is built for baseline x86-64) and called only
// where the CPU reports them.
#include "cast_vector.hpp"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), which it
// then reports as maybe used uninitialized (GCC bug 105593): not ours.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define KILN_CAST_X86 1
#endif

namespace kiln::elementwise {
namespace {

template <class To, class From>
void convert_plain(const From* in, To* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = from_float<To>(to_float(in[i]));
}

#ifdef KILN_CAST_X86

enum class Isa { plain, avx2, avx512 };

Isa cpu_isa() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) return Isa::avx2;
    return Isa::plain;
  }();
  return isa;
}

// f32 -> bf16 on 32-bit lanes, as float_to_bf16: add 0x7fff plus the lowest
// kept bit and keep the top half; a NaN keeps its top half with the quiet
// bit set.
__attribute__((target("avx512f"))) void f32_to_bf16_avx512(const float* in, BFloat16* out, int64_t n) {
  const __m512i one = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7fff);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(in + i));
    const __m512i top = _mm512_srli_epi32(u, 16);
    const __m512i lsb = _mm512_and_si512(top, one);
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, half), lsb), 16);
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, abs_mask), inf);
    const __m512i bits = _mm512_mask_mov_epi32(rounded, nan, _mm512_or_si512(top, quiet));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(bits));
  }
  convert_plain(in + i, out + i, n - i);
}

__attribute__((target("avx512f"))) void bf16_to_f32_avx512(const BFloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  convert_plain(in + i, out + i, n - i);
}

__attribute__((target("avx512f"))) void f32_to_f16_avx512(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  convert_plain(in + i, out + i, n - i);
}

__attribute__((target("avx512f"))) void f16_to_f32_avx512(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  convert_plain(in + i, out + i, n - i);
}

// Eight lanes of f32 -> bf16 bits, in the low 16 bits of each 32-bit lane.
__attribute__((target("avx2"))) __m256i bf16_bits_avx2(const float* in) {
  const __m256i one = _mm256_set1_epi32(1), half = _mm256_set1_epi32(0x7fff);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(in));
  const __m256i top = _mm256_srli_epi32(u, 16);
  const __m256i lsb = _mm256_and_si256(top, one);
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, half), lsb), 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
  return _mm256_blendv_epi8(rounded, _mm256_or_si256(top, quiet), nan);
}

__attribute__((target("avx2"))) void f32_to_bf16_avx2(const float* in, BFloat16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // packus works within 128-bit halves: (a0-3, b0-3, a4-7, b4-7), put back in order.
    const __m256i packed = _mm256_packus_epi32(bf16_bits_avx2(in + i), bf16_bits_avx2(in + i + 8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_permute4x64_epi64(packed, 0xd8));
  }
  convert_plain(in + i, out + i, n - i);
}

__attribute__((target("avx2"))) void bf16_to_f32_avx2(const BFloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  convert_plain(in + i, out + i, n - i);
}

__attribute__((target("avx2,f16c"))) void f32_to_f16_avx2(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  convert_plain(in + i, out + i, n - i);
}

__attribute__((target("avx2,f16c"))) void f16_to_f32_avx2(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  convert_plain(in + i, out + i, n - i);
}

#endif  // KILN_CAST_X86

}  // namespace

#ifdef KILN_CAST_X86
// Calls with_avx512 or with_avx2 where the CPU has it, else the plain loop.
#define KILN_CAST_DISPATCH(with_avx512, with_avx2)    \
  switch (cpu_isa()) {                                \
    case Isa::avx512: return with_avx512(in, out, n); \
    case Isa::avx2: return with_avx2(in, out, n);     \
    case Isa::plain: break;                           \
  }                                                   \
  convert_plain(in, out, n)
#else
#define KILN_CAST_DISPATCH(with_avx512, with_avx2) convert_plain(in, out, n)
#endif

void convert_floats(const float* in, BFloat16* out, int64_t n) {
  KILN_CAST_DISPATCH(f32_to_bf16_avx512, f32_to_bf16_avx2);
}
void convert_floats(const BFloat16* in, float* out, int64_t n) {
  KILN_CAST_DISPATCH(bf16_to_f32_avx512, bf16_to_f32_avx2);
}
void convert_floats(const float* in, Half* out, int64_t n) { KILN_CAST_DISPATCH(f32_to_f16_avx512, f32_to_f16_avx2); }
void convert_floats(const Half* in, float* out, int64_t n) { KILN_CAST_DISPATCH(f16_to_f32_avx512, f16_to_f32_avx2); }

}  // namespace kiln::elementwise

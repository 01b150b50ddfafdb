#include "kiln/kernels/cpu/vector_isa.hpp"

namespace kiln::cpu {

VectorIsa vector_isa() {
#if defined(__x86_64__)
  static const VectorIsa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return VectorIsa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::avx2;
    return VectorIsa::plain;
  }();
  return isa;
#else
  return VectorIsa::plain;
#endif
}

}  // namespace kiln::cpu

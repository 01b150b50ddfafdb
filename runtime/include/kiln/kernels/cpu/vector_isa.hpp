// The widest vectors with fused multiply-adds this x86-64 CPU runs, for
// kernels compiled once per instruction set with target attributes and
// picked at run time (KILN_VECTOR_CLONES picks by itself but has no FMA:
// GCC's target_clones takes one instruction set per clone). Determined
// once; elsewhere than x86-64 always plain.
#pragma once

namespace kiln::cpu {

enum class VectorIsa { plain, avx2, avx512 };

// avx512: AVX-512 F and DQ with FMA; avx2: AVX2 with FMA.
VectorIsa vector_isa();

// The variant of a kernel for this CPU: one of the same function compiled
// for each instruction set (`avx2` and `avx512` with target attributes).
template <class Fn>
Fn for_this_cpu(Fn plain, Fn avx2, Fn avx512) {
  switch (vector_isa()) {
    case VectorIsa::avx512: return avx512;
    case VectorIsa::avx2: return avx2;
    case VectorIsa::plain: break;
  }
  return plain;
}

}  // namespace kiln::cpu

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

}  // namespace kiln::cpu

// Eight floats as one GCC vector, for hand-written loops that become AVX
// code inside functions compiled for AVX2 (target attributes or clones).
// Only ever passed by reference: 32-byte vectors have no register ABI
// without AVX.
#pragma once

// Compiles a function for AVX2 with FMA; its callers check the CPU first
// (cpu::vector_isa()).
#if defined(__x86_64__)
#define KILN_AVX2_FMA __attribute__((target("avx2,fma")))
#else
#define KILN_AVX2_FMA
#endif

namespace kiln::cpu {

typedef float Lanes8 __attribute__((vector_size(32)));

// The same at any float's address. Loads and stores through this type are
// single unaligned vector moves; through memcpy, GCC copied a block of
// accumulators out via the stack, 16 bytes at a time, which cost the
// Winograd products 15-20% of their time.
typedef float UnalignedLanes8 __attribute__((vector_size(32), aligned(4), may_alias));

[[gnu::always_inline]] inline void load8(Lanes8& v, const float* at) {
  v = *reinterpret_cast<const UnalignedLanes8*>(at);
}
[[gnu::always_inline]] inline void store8(float* at, const Lanes8& v) { *reinterpret_cast<UnalignedLanes8*>(at) = v; }

}  // namespace kiln::cpu

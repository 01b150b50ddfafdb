// KILN_VECTOR_CLONES before a function compiles it three times: for
// AVX-512, for AVX2, and for the baseline x86-64 the library is built for, and the first call picks the one the CPU
// runs (GCC's target_clones, through an ifunc). The library still runs on
// any x86-64, and the loops that matter get the vectors the machine has,
// where the baseline alone would leave them 128 bits wide.
//
// For functions whose loops carry the work, called once per run of
// elements or more: the call goes through a pointer and is never inlined.
// The clones name instruction sets, not architectures (arch=x86-64-v4):
// GCC inlines no function into one compiled for another architecture, and
// the loops' lambdas and helpers must be inlined to be vectorised.
// Elsewhere (another compiler or architecture) it is nothing, and so it is
// in sanitizer builds: the ifunc resolvers run while the dynamic loader
// relocates the library, before the sanitizer's runtime has started (a
// ThreadSanitizer build crashes there).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define KILN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KILN_VECTOR_CLONES
#endif

// What oneDNN can compute in on this CPU beyond f32. oneDNN 2.6 runs bf16
// matrix products and convolutions on AVX-512 CPUs: natively where the CPU
// has AVX512_BF16 (or AMX), emulated with f32 instructions on plain AVX-512
// (correct, slower); below AVX-512 it has only reference kernels, too slow
// to offer. Its CPU primitives have no f16 products at all on AVX-512
// without AVX512_FP16, so kiln runs f16 products through f32 instead
// (f16_through_f32.hpp) and never asks oneDNN for them.
#pragma once

#include <string>

#include "kiln/dtype.hpp"
#include "kiln/ops/op_def.hpp"

namespace kiln::nn {

enum class Bf16Support { none, emulated, native };

// From oneDNN's view of the CPU (its effective ISA, which DNNL_MAX_CPU_ISA
// can cap).
Bf16Support cpu_bf16_support();
// "avx512_core_vnni", "avx2", ...: the ISA oneDNN runs on, for messages.
std::string dnnl_cpu_isa_name();

// Why this CPU cannot compute bf16 products ("this CPU has no bf16 support
// in oneDNN ..., this one offers avx2"), or an empty string when it can.
std::string cpu_bf16_missing();
// Throws Status::unsupported, naming the op and the CPU, when `dtype` is
// bf16 and this CPU has no bf16 support in oneDNN. f32 passes.
void check_cpu_dtype(const OpDef& op, DType dtype);
// Throws Status::unsupported: oneDNN has no implementation of `what` (a
// primitive and its shapes) for `dtype` on this CPU; `detail` is oneDNN's word.
[[noreturn]] void throw_no_dnnl_implementation(const OpDef& op, DType dtype, const std::string& what,
                                               const std::string& detail);

}  // namespace kiln::nn

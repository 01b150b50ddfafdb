#include "dnnl_precision.hpp"

#include <dnnl.hpp>

#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::nn {
namespace {

using isa = dnnl::cpu_isa;

// oneDNN's ISA values are bit masks, each including those below it.
bool includes(isa have, isa want) { return (int(have) & int(want)) == int(want); }

std::string dnnl_version_text() {
  const dnnl_version_t* v = dnnl_version();
  return str_cat(v->major, ".", v->minor, ".", v->patch);
}

}  // namespace

Bf16Support cpu_bf16_support() {
  const isa have = dnnl::get_effective_cpu_isa();
  if (includes(have, isa::avx512_core_bf16)) return Bf16Support::native;
  if (includes(have, isa::avx512_core)) return Bf16Support::emulated;
  return Bf16Support::none;
}

std::string dnnl_cpu_isa_name() {
  // Widest first: each includes the ones after it.
  constexpr std::pair<isa, const char*> kNames[] = {
      {isa::avx512_core_amx, "avx512_core_amx"}, {isa::avx512_core_bf16, "avx512_core_bf16"},
      {isa::avx512_core_vnni, "avx512_core_vnni"}, {isa::avx512_core, "avx512_core"},
      {isa::avx2_vnni, "avx2_vnni"}, {isa::avx2, "avx2"}, {isa::avx, "avx"}, {isa::sse41, "sse41"}};
  const isa have = dnnl::get_effective_cpu_isa();
  for (const auto& [value, name] : kNames)
    if (includes(have, value)) return name;
  return "below sse41";
}

std::string cpu_bf16_missing() {
  if (cpu_bf16_support() != Bf16Support::none) return "";
  return str_cat("this CPU has no bf16 support in oneDNN ", dnnl_version_text(),
                 " (it runs bf16 products on AVX-512 CPUs, natively with AVX512_BF16; this one offers ",
                 dnnl_cpu_isa_name(), ")");
}

void check_cpu_dtype(const OpDef& op, DType dtype) {
  if (dtype != DType::bf16) return;
  const std::string missing = cpu_bf16_missing();
  if (!missing.empty())
    throw_error(Status::unsupported,
                str_cat("op '", op.name, "': ", missing, "; run in f32 here, or use autocast on a GPU"));
}

void throw_no_dnnl_implementation(const OpDef& op, DType dtype, const std::string& what, const std::string& detail) {
  throw_error(Status::unsupported, str_cat("op '", op.name, "': oneDNN ", dnnl_version_text(), " has no ",
                                           dtype_name(dtype), " implementation of ", what, " on this CPU (",
                                           dnnl_cpu_isa_name(), ": ", detail, ")"));
}

}  // namespace kiln::nn

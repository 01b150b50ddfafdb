#include "dnnl_eltwise.hpp"

#include <bit>
#include <optional>
#include <string_view>

#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::elementwise {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::memory::desc flat_desc(DType dtype, int64_t n) {
  return dnnl::memory::desc({n}, dtype == DType::bf16 ? dt::bf16 : dt::f32, tag::a);
}

// Parameters enter the key as bit patterns: printed reals could round two
// different slopes to one key.
std::string cache_key(const char* kind, const EltwiseParams& p, DType dtype, int64_t n) {
  return str_cat(kind, '/', int(p.algorithm), '/', std::bit_cast<uint32_t>(float(p.alpha)), '/',
                 std::bit_cast<uint32_t>(float(p.beta)), '/', dtype_name(dtype), '/', n);
}

// The forward primitive_desc, or none where oneDNN has no implementation
// at all (bf16 round, for one).
std::optional<dnnl::eltwise_forward::primitive_desc> try_forward_pd(const dnnl::engine& engine, const EltwiseParams& p,
                                                                    DType dtype, int64_t n) {
  try {
    const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, p.algorithm, flat_desc(dtype, n),
                                           float(p.alpha), float(p.beta));
    return dnnl::eltwise_forward::primitive_desc(desc, engine);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// The primitive of `pd`, or none where oneDNN offers only its reference
// implementation ("ref:any"), which is slower than kiln's own loops.
template <class Primitive, class Desc>
std::optional<Primitive> vector_code(const std::optional<Desc>& pd) {
  if (!pd || std::string_view(pd->impl_info_str()).starts_with("ref")) return std::nullopt;
  return Primitive(*pd);
}

// oneDNN takes mutable handles; inputs are only read.
dnnl::memory wrap(const dnnl::engine& engine, DType dtype, int64_t n, const void* data) {
  return dnnl::memory(flat_desc(dtype, n), engine, const_cast<void*>(data));
}

}  // namespace

bool dnnl_eltwise_forward(Runtime& rt, const EltwiseParams& p, DType dtype, const void* src, void* dst, int64_t n) {
  if (n == 0) return true;
  const dnnl::engine& engine = rt.dnnl().engine();
  auto prim = rt.dnnl().cached<std::optional<dnnl::eltwise_forward>>(cache_key("eltwise_fwd", p, dtype, n), [&] {
    return vector_code<dnnl::eltwise_forward>(try_forward_pd(engine, p, dtype, n));
  });
  if (!*prim) return false;
  rt.dnnl().execute(**prim, {{DNNL_ARG_SRC, wrap(engine, dtype, n, src)}, {DNNL_ARG_DST, wrap(engine, dtype, n, dst)}},
                    n);
  return true;
}

bool dnnl_eltwise_backward(Runtime& rt, const EltwiseParams& p, DType dtype, const void* src, const void* diff_dst,
                           void* diff_src, int64_t n) {
  if (n == 0) return true;
  const dnnl::engine& engine = rt.dnnl().engine();
  auto prim = rt.dnnl().cached<std::optional<dnnl::eltwise_backward>>(cache_key("eltwise_bwd", p, dtype, n), [&] {
    std::optional<dnnl::eltwise_backward::primitive_desc> pd;
    if (const auto forward = try_forward_pd(engine, p, dtype, n)) {
      try {
        const dnnl::eltwise_backward::desc desc(p.algorithm, flat_desc(dtype, n), flat_desc(dtype, n),
                                                float(p.alpha), float(p.beta));
        pd.emplace(desc, engine, *forward);
      } catch (const dnnl::error&) {
      }
    }
    return vector_code<dnnl::eltwise_backward>(pd);
  });
  if (!*prim) return false;
  rt.dnnl().execute(**prim,
                    {{DNNL_ARG_SRC, wrap(engine, dtype, n, src)},
                     {DNNL_ARG_DIFF_DST, wrap(engine, dtype, n, diff_dst)},
                     {DNNL_ARG_DIFF_SRC, wrap(engine, dtype, n, diff_src)}},
                    n);
  return true;
}

}  // namespace kiln::elementwise

// kiln_tensor_assign: values copied into an existing tensor in place,
// converted to its dtype and moved to its device on the way.
#include "tensor_assign.hpp"

#include <cstring>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/error.hpp"
#include "kiln/memory/cuda.hpp"

using kiln::abi::guarded;

namespace {

// `src` as a dense tensor of `dtype` on `device`, through the ops "cast" and "to".
kiln::Tensor converted(kiln::Runtime& rt, kiln::Tensor src, kiln::DType dtype, kiln::Device device) {
  if (src.dtype() != dtype) {
    const kiln::OpDef& cast = rt.op("cast");
    src = rt.call1(cast, {src}, cast.make_attrs({{"dtype", dtype}}));
  }
  if (src.device() != device) {
    const kiln::OpDef& to = rt.op("to");
    src = rt.call1(to, {src}, to.make_attrs({{"device", to_string(device)}}));
  }
  return rt.contiguous(src);
}

}  // namespace

namespace kiln::abi {

void assign_values(Runtime& rt, const Tensor& target, const Tensor& src) {
  KILN_CHECK(src.shape() == target.shape(), Status::shape_mismatch, "'dst' is shaped ", to_string(target.shape()),
             " and 'src' ", to_string(src.shape()), "; they must be the same");
  KILN_CHECK(target.is_contiguous(), Status::invalid_state, "'dst' (", describe(target),
             ") is a strided view; assign into a contiguous tensor");
  // An assignment is not part of any model: it writes a leaf (a parameter,
  // an optimizer's state) behind the tape's back.
  NoGradGuard no_grad(rt);
  const Tensor values = converted(rt, src, target.dtype(), target.device());
  if (values.same(target) || values.raw_data() == target.raw_data()) return;
  if (target.device().is_cpu() && values.device().is_cpu())
    std::memmove(target.raw_data(), values.raw_data(), target.nbytes());
  else
    cuda_copy(target.raw_data(), target.device(), values.raw_data(), values.device(), target.nbytes());
}

}  // namespace kiln::abi

extern "C" {

kiln_status kiln_tensor_assign(kiln_tensor* dst, const kiln_tensor* src) {
  KILN_REQUIRE(dst, src);
  return guarded(__func__, [&] {
    kiln::abi::check_owner(dst->runtime, src, "src");
    kiln::abi::assign_values(dst->runtime->runtime, dst->tensor, src->tensor);
  });
}

}  // extern "C"

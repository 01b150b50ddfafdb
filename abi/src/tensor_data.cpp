// Getting at a tensor's elements: reading them back, the raw pointer of a CPU
// tensor, dense copies and copies to another device.
#include <cstring>

#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/error.hpp"

using kiln::abi::guarded;
using kiln::abi::same_or_new_handle;

namespace {

// `t` on `device`, through the op "to", which backends register when they
// can move data between devices.
kiln::Tensor copy_to(kiln::Runtime& rt, const kiln::Tensor& t, kiln::Device device) {
  if (t.device() == device) return t;
  const kiln::OpDef* to = rt.registry().find("to");
  KILN_CHECK(to != nullptr, kiln::Status::unsupported, "copying a tensor from ", to_string(t.device()), " to ",
             to_string(device), " needs the op 'to', which this build does not have");
  return rt.call1(*to, {t}, to->make_attrs({{"device", to_string(device)}}));
}

}  // namespace

extern "C" {

kiln_status kiln_tensor_read(const kiln_tensor* t, void* dst, size_t dst_bytes) {
  KILN_REQUIRE(t, dst);
  return guarded(__func__, [&] {
    const size_t needed = t->tensor.nbytes();
    KILN_CHECK(dst_bytes >= needed, kiln::Status::invalid_argument, "the buffer has ", dst_bytes, " bytes, the ",
               describe(t->tensor), " tensor needs ", needed);
    kiln::Runtime& rt = t->runtime->runtime;
    kiln::NoGradGuard no_grad(rt);  // a read is not part of any model
    const kiln::Tensor host = rt.contiguous(copy_to(rt, t->tensor, kiln::Device::cpu()));
    std::memcpy(dst, host.raw_data(), needed);
  });
}

kiln_status kiln_tensor_data(const kiln_tensor* t, void** out) {
  KILN_REQUIRE(t, out);
  return guarded(__func__, [&] {
    KILN_CHECK(t->tensor.device().is_cpu(), kiln::Status::unsupported, "the data of a ", describe(t->tensor),
               " tensor is not host memory; use kiln_tensor_read or kiln_tensor_to");
    KILN_CHECK(t->tensor.is_contiguous(), kiln::Status::invalid_state, "the ", describe(t->tensor),
               " tensor is a strided view; make a dense copy with kiln_tensor_contiguous first");
    *out = t->tensor.raw_data();
  });
}

kiln_status kiln_tensor_contiguous(const kiln_tensor* t, kiln_tensor** out) {
  KILN_REQUIRE(t, out);
  return guarded(__func__, [&] { *out = same_or_new_handle(t, t->runtime->runtime.contiguous(t->tensor)); });
}

kiln_status kiln_tensor_to(const kiln_tensor* t, kiln_device_type device, int device_index, kiln_tensor** out) {
  KILN_REQUIRE(t, out);
  return guarded(__func__, [&] {
    kiln::Runtime& rt = t->runtime->runtime;
    const kiln::Device target = kiln::abi::to_device(device, device_index);
    rt.check_device(target);
    *out = same_or_new_handle(t, copy_to(rt, t->tensor, target));
  });
}

}  // extern "C"

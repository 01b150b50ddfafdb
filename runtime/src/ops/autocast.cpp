// Autocast scopes (per runtime, per thread) and the casts the dispatcher
// makes under them (kiln/ops/autocast.hpp).
#include "kiln/ops/autocast.hpp"

#include <algorithm>
#include <utility>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "nn/dnnl_precision.hpp"

namespace kiln {
namespace {

// Open scopes of this thread, innermost last: (runtime id, dtype). The
// dispatcher looks here only while the runtime counts an open scope on
// some thread (Runtime::any_autocast_scope), so that op calls without
// autocast pay one relaxed load, not a thread-local lookup.
thread_local std::vector<std::pair<uint64_t, DType>> tls_scopes;

bool is_low(DType t) { return t == DType::bf16 || t == DType::f16; }

// The wider of two floating dtypes; bf16 and f16 meet at f32, as neither
// holds the other.
DType wider(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::f64 || b == DType::f64) return DType::f64;
  return DType::f32;
}

// Whether the dispatcher would find a kernel for `dtype`: the key is the
// dtype of input `dtype_input` when that input is floating (it is then cast
// to `dtype`); for anything else this cannot be known here, so say yes.
bool has_kernel(const OpDef& op, Device device, std::span<const Tensor> inputs, DType dtype) {
  if (op.view) return true;
  const int di = op.dtype_input;
  if (di < 0 || size_t(di) >= inputs.size() || !inputs[size_t(di)].defined() ||
      !is_floating(inputs[size_t(di)].dtype()))
    return true;
  return op.kernel(device.type, dtype) != nullptr;
}

// The dtype every floating input of `op` runs in under the low dtype `low`.
DType target_dtype(const OpDef& op, Device device, std::span<const Tensor> inputs, DType widest, DType low) {
  DType target = widest;
  if (widest != DType::f64) {  // f64 is never narrowed: the op then only promotes
    if (op.precision == PrecisionCategory::lower) target = low;
    if (op.precision == PrecisionCategory::f32) target = DType::f32;
  }
  // An op without a kernel for a 16-bit type here (a plugin's f32-only op,
  // say) runs in f32 rather than failing.
  if (is_low(target) && !has_kernel(op, device, inputs, target) && has_kernel(op, device, inputs, DType::f32))
    target = DType::f32;
  return target;
}

}  // namespace

DType autocast_dtype(const Runtime& rt) {
  if (!rt.any_autocast_scope()) return DType::f32;
  for (auto it = tls_scopes.rbegin(); it != tls_scopes.rend(); ++it)
    if (it->first == rt.id()) return it->second;
  return DType::f32;
}

void push_autocast(Runtime& rt, DType dtype) {
  KILN_CHECK(is_low(dtype) || dtype == DType::f32, Status::invalid_argument, "autocast: dtype ", dtype_name(dtype),
             " is not a precision to run in; expected bf16 or f16 (or f32 to turn autocast off inside a scope)");
  tls_scopes.emplace_back(rt.id(), dtype);
  rt.count_autocast_scope(1);
}

bool pop_autocast(Runtime& rt) {
  const uint64_t id = rt.id();
  auto it = std::find_if(tls_scopes.rbegin(), tls_scopes.rend(), [&](const auto& s) { return s.first == id; });
  if (it == tls_scopes.rend()) return false;
  tls_scopes.erase(std::next(it).base());
  rt.count_autocast_scope(-1);
  return true;
}

std::string autocast_unsupported(Device device, DType dtype) {
  if (device.is_cpu() && dtype == DType::bf16) return nn::cpu_bf16_missing();
  return "";
}

AutocastGuard::AutocastGuard(Runtime& rt, DType dtype) : runtime_(rt) { push_autocast(rt, dtype); }

AutocastGuard::~AutocastGuard() { pop_autocast(runtime_); }

bool autocast_inputs(Runtime& rt, const OpDef& op, Device device, std::span<const Tensor> inputs, DType low,
                     std::vector<Tensor>& cast) {
  // A cast copy of an input written in place would take the writes.
  if (op.writes_inputs) return false;
  bool any = false;
  DType widest = DType::f32;
  for (const Tensor& t : inputs) {
    if (!t.defined() || !is_floating(t.dtype())) continue;
    widest = any ? wider(widest, t.dtype()) : t.dtype();
    any = true;
  }
  if (!any) return false;
  const DType target = target_dtype(op, device, inputs, widest, low);
  auto needs_cast = [&](const Tensor& t) { return t.defined() && is_floating(t.dtype()) && t.dtype() != target; };
  if (std::none_of(inputs.begin(), inputs.end(), needs_cast)) return false;
  const OpDef& cast_op = rt.op("cast");
  const Attrs attrs = cast_op.make_attrs({{"dtype", target}});
  cast.clear();
  cast.reserve(inputs.size());
  for (const Tensor& t : inputs) cast.push_back(needs_cast(t) ? rt.call1(cast_op, {t}, attrs) : t);
  return true;
}

}  // namespace kiln

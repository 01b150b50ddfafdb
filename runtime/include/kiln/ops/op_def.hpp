// An op: a schema (inputs, attributes), a shape/dtype function, kernels per
// (device, dtype) and a backward. Ops are registered by name in a runtime's
// OpRegistry, looked up once, then called by handle (`const OpDef&`) through
// Runtime::call.
//
// Rules for kernels and backwards (written once here, followed everywhere):
// - A kernel writes every element of its outputs; the dispatcher allocates
//   them contiguous, from the shapes and dtypes the infer function gave.
// - Inputs reach a kernel contiguous unless the op sets accepts_strided.
// - A backward returns one gradient per input (undefined where the input needs
//   none), shaped like that input. It is built from ops, and runs with grad
//   recording off. grad_outputs are always defined for floating outputs
//   (zeros are filled in for outputs that received no gradient), except
//   the backward-only outputs (backward_only_outputs), which get none.
// - The kernel is chosen by the device of the inputs and the dtype of input
//   `dtype_input` (or of output 0 for ops without inputs, or with -1).
// - An op that sets writes_inputs updates its inputs in place (optimizer
//   steps) and may have no outputs. It has no backward, takes its inputs as
//   given (accepts_strided, refusing strided ones in its infer function: a
//   dense copy would lose the writes), and the dispatcher refuses it while
//   gradients are recorded for an input that requires grad.
// - Under an autocast scope (kiln/ops/autocast.hpp) the dispatcher casts
//   floating inputs before the kernel runs, as the op's `precision` says;
//   kernels and infer functions see the cast tensors only.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/ops/attrs.hpp"
#include "kiln/shape.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

class Runtime;
struct OpDef;

using NamedAttrs = std::initializer_list<std::pair<std::string_view, AttrValue>>;

// What an autocast scope does to an op's floating inputs (nothing while no
// scope is open; f64 inputs are never narrowed):
// - lower: the products (matmul, linear, conv2d) run in the scope's low
//   dtype (bf16 or f16): f32 inputs are cast down, outputs come out low.
// - f32: ops that lose too much in 16 bits (softmax, losses, norms, exp,
//   log, pow, sums and means) cast bf16/f16 inputs up to f32.
// - promote: inputs of different floating dtypes are cast to the widest
//   (bf16 with f16 meet at f32). The default, and what plugin ops get.
enum class PrecisionCategory : uint8_t { promote = 0, lower = 1, f32 = 2 };

struct TensorMeta {
  Shape shape;
  DType dtype = DType::f32;
  Device device;
};

struct InputSpec {
  std::string name;
  bool optional = false;  // may be passed as an undefined tensor (a bias, say)
  bool variadic = false;  // last input only: zero or more tensors (concat)
};

// Given to an op's infer function: fill `outputs`, or throw an Error whose
// message names the op, what it received and what it expected.
struct InferCall {
  const OpDef& op;
  std::span<const Tensor> inputs;
  const Attrs& attrs;
  Device device;  // the device the call runs on
  std::vector<TensorMeta>& outputs;
};

struct KernelCall {
  Runtime& runtime;
  const OpDef& op;
  std::span<const Tensor> inputs;
  std::span<Tensor> outputs;
  const Attrs& attrs;
};

struct BackwardCall {
  Runtime& runtime;
  const OpDef& op;
  std::span<const Tensor> inputs;        // as passed to the forward (undefined if not saved)
  std::span<const TensorMeta> input_meta;  // shape, dtype, device of every input, saved or not
  std::span<const Tensor> outputs;       // as returned by the forward
  std::span<const Tensor> grad_outputs;  // one per output; undefined means zeros
  const Attrs& attrs;
  std::span<const bool> needs_input_grad;
};

using InferFn = void (*)(InferCall& call);
using KernelFn = void (*)(const KernelCall& call);
using BackwardFn = std::vector<Tensor> (*)(const BackwardCall& call);
// A view op returns its output aliasing the input's storage where the layout
// allows (it may fall back to a copy through the runtime); no kernel runs.
using ViewFn = Tensor (*)(Runtime& rt, const Tensor& input, const Attrs& attrs, const OpDef& op);

struct OpDef {
  std::string name;
  std::vector<InputSpec> inputs;
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  ViewFn view = nullptr;
  BackwardFn backward = nullptr;  // null: outputs carry no gradient
  bool accepts_strided = false;
  bool writes_inputs = false;
  int dtype_input = 0;
  PrecisionCategory precision = PrecisionCategory::promote;
  // Saving a tensor for backward keeps its memory alive until backward; ops
  // whose backward does not read an input or output say so here.
  bool saves_inputs = true;
  bool saves_outputs = true;
  // When set, decides saves_outputs per call from the attributes: for an op
  // whose backward reads its outputs in some modes only.
  bool (*saves_outputs_for)(const Attrs& attrs) = nullptr;
  // The last `backward_only_outputs` outputs are for the backward alone (a
  // random mask it must reuse, say): the kernel writes them and a recorded
  // call saves them with the others, but the caller never receives them.
  size_t backward_only_outputs = 0;
  // The floating-point operations of a call (a multiply-add is two), given
  // the call after its kernel ran, for utilisation figures
  // (kiln/ops/flop_count.hpp). Set by the ops whose arithmetic dominates
  // models (products, convolutions); null counts nothing.
  double (*flops)(const KernelCall& call) = nullptr;
  std::array<std::array<KernelFn, kNumDTypes>, kNumDeviceTypes> kernels{};
  // What the functions above need beyond the definition, for ops defined
  // outside the runtime (a plugin's struct and a reference on its library):
  // they read it through the OpDef they are given. Null for built-in ops.
  std::shared_ptr<const void> extension;

  KernelFn kernel(DeviceType device, DType dtype) const {
    return kernels[size_t(device)][size_t(dtype)];
  }
  void set_kernel(DeviceType device, DType dtype, KernelFn fn) { kernels[size_t(device)][size_t(dtype)] = fn; }
  void set_kernel(DeviceType device, std::span<const DType> dtypes, KernelFn fn) {
    for (DType t : dtypes) set_kernel(device, t, fn);
  }
  void set_kernel(DeviceType device, std::initializer_list<DType> dtypes, KernelFn fn) {
    set_kernel(device, std::span<const DType>(dtypes.begin(), dtypes.size()), fn);
  }

  // Index of the attribute `name` in the schema, or -1.
  int attr_index(std::string_view name) const;
  // The attribute `name` of a call; throws naming the op when the schema has none.
  const AttrValue& attr(const Attrs& values, std::string_view name) const;
  int64_t attr_int(const Attrs& v, std::string_view name) const { return std::get<int64_t>(attr(v, name)); }
  double attr_real(const Attrs& v, std::string_view name) const { return std::get<double>(attr(v, name)); }
  bool attr_bool(const Attrs& v, std::string_view name) const { return std::get<bool>(attr(v, name)); }
  const std::vector<int64_t>& attr_ints(const Attrs& v, std::string_view name) const {
    return std::get<std::vector<int64_t>>(attr(v, name));
  }
  const std::string& attr_string(const Attrs& v, std::string_view name) const {
    return std::get<std::string>(attr(v, name));
  }
  DType attr_dtype(const Attrs& v, std::string_view name) const { return std::get<DType>(attr(v, name)); }

  // Attribute values from (name, value) pairs, defaults filled in, types
  // checked (an integer is accepted where a real is expected).
  Attrs make_attrs(std::span<const std::pair<std::string_view, AttrValue>> given) const;
  Attrs make_attrs(std::initializer_list<std::pair<std::string_view, AttrValue>> given) const {
    return make_attrs(std::span<const std::pair<std::string_view, AttrValue>>(given.begin(), given.size()));
  }
  Attrs default_attrs() const { return make_attrs({}); }
};

}  // namespace kiln

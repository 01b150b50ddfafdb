// Runtime::call, the one path every op call takes. Kept lean: it runs for
// every op, so it allocates only the output tensors and (when recording) the
// tape node and the profiler's event.
#include <algorithm>

#include "kiln/autograd/grad_mode.hpp"
#include "kiln/autograd/node.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/autocast.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/runtime.hpp"
#include "dense_inputs.hpp"

namespace kiln {

Edge gradient_edge(const Tensor& t) {
  AutogradMeta& meta = t.impl()->autograd;
  if (meta.grad_fn) return {meta.grad_fn, meta.output_nr};
  std::shared_ptr<Node> acc = meta.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    meta.grad_accumulator = acc;
  }
  return {std::move(acc), 0};
}

namespace {

std::string supported_dtypes(const OpDef& op, DeviceType device) {
  std::string out;
  for (int t = 0; t < kNumDTypes; ++t) {
    if (!op.kernel(device, DType(t))) continue;
    if (!out.empty()) out += ", ";
    out += dtype_name(DType(t));
  }
  return out.empty() ? "none" : out;
}

void check_inputs(const OpDef& op, std::span<const Tensor> inputs) {
  const bool variadic = !op.inputs.empty() && op.inputs.back().variadic;
  const size_t fixed = op.inputs.size() - (variadic ? 1 : 0);
  size_t required = 0;
  for (size_t i = 0; i < fixed; ++i)
    if (!op.inputs[i].optional) required = i + 1;
  KILN_CHECK(inputs.size() >= required && (variadic || inputs.size() <= fixed), Status::invalid_argument,
             "op '", op.name, "' takes ", variadic ? "at least " : "", required == fixed || variadic ? "" : "up to ",
             variadic ? required : fixed, " input(s), got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& spec = op.inputs[std::min(i, op.inputs.size() - 1)];
    KILN_CHECK(inputs[i].defined() || spec.optional, Status::invalid_argument, "op '", op.name, "': input ", i,
               " ('", spec.name, "') is required but was not given");
  }
}

Device call_device(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  const Tensor* first = nullptr;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (!first) {
      first = &t;
      continue;
    }
    KILN_CHECK(t.device() == first->device(), Status::device_mismatch, "op '", op.name,
               "': inputs are on different devices (", to_string(first->device()), " and ", to_string(t.device()),
               "); move them to one device first");
  }
  if (first) return first->device();
  const int i = op.attr_index("device");
  if (i < 0) return Device::cpu();
  Device d;
  const std::string& text = attrs.string(size_t(i));
  KILN_CHECK(parse_device(text, &d), Status::invalid_argument, "op '", op.name, "': unknown device '", text,
             "' (expected cpu, cuda or cuda:N)");
  return d;
}

// Writing into a tensor the tape may still read would corrupt its gradient.
void check_in_place(const OpDef& op, std::span<const Tensor> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    KILN_CHECK(!inputs[i].defined() || !inputs[i].requires_grad(), Status::invalid_state, "op '", op.name,
               "' writes into its inputs in place, and input ", i,
               " requires grad while gradients are recorded; call it with recording off (no_grad)");
}

void record(const OpDef& op, std::span<const Tensor> inputs, std::span<Tensor> outputs,
            const std::vector<TensorMeta>& metas, const Attrs& attrs) {
  auto node = std::make_shared<OpNode>(op, attrs);
  node->num_outputs = int(outputs.size());
  node->next_edges.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) node->next_edges[i] = gradient_edge(inputs[i]);
  node->input_meta.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined()) node->input_meta[i] = {inputs[i].shape(), inputs[i].dtype(), inputs[i].device()};
  if (op.saves_inputs) {
    node->saved_inputs.reserve(inputs.size());
    for (const Tensor& t : inputs) node->saved_inputs.push_back(t.defined() ? t.detach() : Tensor());
  }
  if (op.saves_outputs_for ? op.saves_outputs_for(attrs) : op.saves_outputs) {
    node->saved_outputs.reserve(outputs.size());
    for (const Tensor& t : outputs) node->saved_outputs.push_back(t.detach());
  }
  node->output_meta = metas;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!is_floating(outputs[i].dtype())) continue;
    AutogradMeta& meta = outputs[i].impl()->autograd;
    meta.requires_grad = true;
    meta.grad_fn = node;
    meta.output_nr = int(i);
  }
}

// The call once its inputs are checked and its device known: autocast,
// the kernel (or view) and the tape.
std::vector<Tensor> run(Runtime& rt, const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
                        Device device) {
  // Under an autocast scope the op runs on cast inputs; the casts are op
  // calls of their own, recorded on the tape like any other.
  std::vector<Tensor> cast_inputs;
  if (rt.any_autocast_scope()) {
    const DType low = autocast_dtype(rt);
    if (low != DType::f32 && autocast_inputs(rt, op, device, inputs, low, cast_inputs)) inputs = cast_inputs;
  }
  if (op.writes_inputs && grad_enabled(rt.id())) check_in_place(op, inputs);

  std::vector<Tensor> outputs;
  std::vector<TensorMeta> metas;
  if (op.view) {
    outputs.push_back(op.view(rt, inputs[0], attrs, op).detach());
    metas.push_back({outputs[0].shape(), outputs[0].dtype(), device});
  } else {
    InferCall infer{op, inputs, attrs, device, metas};
    op.infer(infer);
    const int di = op.dtype_input;
    const bool by_input = di >= 0 && size_t(di) < inputs.size() && inputs[size_t(di)].defined();
    KILN_CHECK(by_input || !metas.empty(), Status::internal, "op '", op.name, "' produced no outputs");
    const DType key = by_input ? inputs[size_t(di)].dtype() : metas[0].dtype;
    const KernelFn kernel = op.kernel(device.type, key);
    KILN_CHECK(kernel != nullptr, Status::unsupported, "op '", op.name, "' has no kernel for ", dtype_name(key),
               " on ", to_string(device), " (supported there: ", supported_dtypes(op, device.type), ")");
    // Kernels read dense memory unless they declare otherwise; the copies
    // live only for this call.
    const std::vector<Tensor> dense = op.accepts_strided ? std::vector<Tensor>() : dense_copies(rt, inputs);
    const std::span<const Tensor> kernel_inputs = dense.empty() ? inputs : std::span<const Tensor>(dense);
    outputs.reserve(metas.size());
    for (const TensorMeta& m : metas) outputs.push_back(Tensor::empty(m.shape, m.dtype, rt.allocator(m.device)));
    const KernelCall call{rt, op, kernel_inputs, outputs, attrs};
    if (op.flops) {
      const CountedOpScope counted;
      kernel(call);
      if (counted.outermost()) count_flops_on_this_thread(op.flops(call));
    } else {
      kernel(call);
    }
  }

  if (op.backward && grad_enabled(rt.id()) &&
      std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined() && t.requires_grad(); }))
    record(op, inputs, outputs, metas, attrs);
  outputs.resize(outputs.size() - op.backward_only_outputs);
  return outputs;
}

}  // namespace

std::vector<Tensor> Runtime::call(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  check_inputs(op, inputs);
  KILN_CHECK(attrs.size() == op.attrs.size(), Status::invalid_argument, "op '", op.name, "' expects ",
             op.attrs.size(), " attribute values, got ", attrs.size());
  const Device device = call_device(op, inputs, attrs);
  check_device(device);
  // Off, profiling costs this one relaxed load.
  if (!profiler_.enabled()) return run(*this, op, inputs, attrs, device);
  ProfiledCall profiled(profiler_, op.name, device, inputs);
  return run(*this, op, inputs, attrs, device);
}

Tensor Runtime::call1(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  std::vector<Tensor> out = call(op, inputs, attrs);
  KILN_CHECK(out.size() == 1, Status::invalid_argument, "op '", op.name, "' returns ", out.size(),
             " outputs; use call() for it");
  return std::move(out[0]);
}

std::vector<Tensor> Runtime::call(std::string_view name, std::initializer_list<Tensor> inputs, NamedAttrs attrs) {
  const OpDef& def = op(name);
  return call(def, std::span<const Tensor>(inputs.begin(), inputs.size()), def.make_attrs(attrs));
}

Tensor Runtime::call1(std::string_view name, std::initializer_list<Tensor> inputs, NamedAttrs attrs) {
  const OpDef& def = op(name);
  return call1(def, std::span<const Tensor>(inputs.begin(), inputs.size()), def.make_attrs(attrs));
}

}  // namespace kiln

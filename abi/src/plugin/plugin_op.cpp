// The adapters between the dispatcher (OpDef, Tensor) and a plugin's op
// (kiln_op_type, kiln_tensor handles). Each call wraps the tensors in
// temporary handles that share their storage, so kernels write the outputs
// in place, and turns a failing status into an error naming op and plugin.
#include "plugin/plugin_op.hpp"

#include <cstring>

#include "convert.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "plugin/kernel_scope.hpp"
#include "plugin/plugin_call.hpp"

namespace kiln::abi {
namespace {

// The plugin's struct, with every string and array it points to copied.
struct PluginOp {
  kiln_op_type type{};
  std::string name;
  std::vector<std::string> input_names;
  std::vector<const char*> input_name_pointers;
  std::vector<kiln_dtype> dtypes;
  ConfigSchema attrs;
  std::string plugin_name;
  PluginRef plugin;
  kiln_runtime* runtime = nullptr;  // not retained: the op lives in its table
};

const PluginOp& plugin_op(const OpDef& def) { return *static_cast<const PluginOp*>(def.extension.get()); }

void check(kiln_status status, const PluginOp& op, const char* callback) {
  check_plugin_call(status, str_cat(describe_registered("op", op.name, op.plugin_name), ", ", callback));
}

// Handles for the duration of one call; undefined tensors become NULL.
class TempHandles {
 public:
  TempHandles(kiln_runtime* rt, std::span<const Tensor> tensors) {
    handles_.reserve(tensors.size());
    for (const Tensor& t : tensors) handles_.push_back(t.defined() ? new_handle(rt, t) : nullptr);
  }
  explicit TempHandles(size_t n) : handles_(n, nullptr) {}
  ~TempHandles() {
    for (kiln_tensor* h : handles_) kiln_tensor_release(h);
  }
  TempHandles(const TempHandles&) = delete;
  TempHandles& operator=(const TempHandles&) = delete;

  kiln_tensor** data() { return handles_.data(); }
  size_t size() const { return handles_.size(); }
  kiln_tensor* operator[](size_t i) const { return handles_[i]; }

 private:
  std::vector<kiln_tensor*> handles_;
};

// A call's attribute values as kiln_attr, pointing into `values`.
std::vector<kiln_attr> to_c_attrs(const OpDef& def, const Attrs& values) {
  std::vector<kiln_attr> out(def.attrs.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = to_c_attr(def.attrs[i].name.c_str(), values[i]);
  return out;
}

kiln_tensor_desc desc_of(const Tensor& t) {
  kiln_tensor_desc d{};
  d.rank = -1;
  if (!t.defined()) return d;
  d.rank = t.rank();
  for (int i = 0; i < t.rank(); ++i) d.dims[i] = t.dim(i);
  d.dtype = from_dtype(t.dtype());
  return d;
}

TensorMeta meta_of(const kiln_tensor_desc& d, const PluginOp& op, size_t index, Device device) {
  KILN_CHECK(d.rank >= 0 && d.rank <= KILN_MAX_DIMS, Status::internal, "op '", op.name, "' of plugin '",
             op.plugin_name, "': infer gave output ", index, " rank ", d.rank, " (expected 0 to ", KILN_MAX_DIMS,
             "; every output must be filled in)");
  for (int i = 0; i < d.rank; ++i)
    KILN_CHECK(d.dims[i] >= 0, Status::internal, "op '", op.name, "' of plugin '", op.plugin_name,
               "': infer gave output ", index, " a negative dimension ", d.dims[i]);
  return {to_shape(d.dims, d.rank, "infer output"), to_dtype(d.dtype), device};
}

void plugin_infer(InferCall& c) {
  const PluginOp& op = plugin_op(c.op);
  std::vector<kiln_tensor_desc> inputs(c.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = desc_of(c.inputs[i]);
  const std::vector<kiln_attr> attrs = to_c_attrs(c.op, c.attrs);
  std::vector<kiln_tensor_desc> outputs(op.type.n_outputs);
  for (kiln_tensor_desc& d : outputs) d.rank = -1;
  const kiln_infer_call call{sizeof(kiln_infer_call), inputs.data(), inputs.size(), attrs.data(), attrs.size(),
                             outputs.data(), outputs.size()};
  check(op.type.infer(op.type.user, &call), op, "infer");
  for (size_t i = 0; i < outputs.size(); ++i) c.outputs.push_back(meta_of(outputs[i], op, i, c.device));
}

Device call_device(const KernelCall& c) {
  for (const Tensor& t : c.inputs)
    if (t.defined()) return t.device();
  return c.outputs.empty() ? Device::cpu() : c.outputs[0].device();
}

void plugin_kernel(const KernelCall& c) {
  const PluginOp& op = plugin_op(c.op);
  KernelScope scope(op.runtime, call_device(c));
  const kiln_kernel_fn kernel = scope.context()->device == KILN_DEVICE_CPU ? op.type.cpu_kernel : op.type.cuda_kernel;
  TempHandles inputs(op.runtime, c.inputs);
  TempHandles outputs(op.runtime, std::span<const Tensor>(c.outputs.data(), c.outputs.size()));
  const std::vector<kiln_attr> attrs = to_c_attrs(c.op, c.attrs);
  const kiln_kernel_call call{sizeof(kiln_kernel_call), scope.context(), inputs.data(), inputs.size(),
                              outputs.data(), outputs.size(), attrs.data(), attrs.size()};
  check(kernel(op.type.user, &call), op, "kernel");
}

std::vector<Tensor> plugin_backward(const BackwardCall& c) {
  const PluginOp& op = plugin_op(c.op);
  TempHandles inputs(op.runtime, c.inputs), outputs(op.runtime, c.outputs), grad_outputs(op.runtime, c.grad_outputs);
  TempHandles grads(c.inputs.size());
  const std::vector<kiln_attr> attrs = to_c_attrs(c.op, c.attrs);
  std::vector<int> needs(c.needs_input_grad.begin(), c.needs_input_grad.end());
  const kiln_backward_call call{sizeof(kiln_backward_call), op.runtime,     inputs.data(),      inputs.size(),
                                outputs.data(),             outputs.size(), grad_outputs.data(), attrs.data(),
                                attrs.size(),               needs.data(),   grads.data()};
  check(op.type.backward(op.type.user, &call), op, "backward");
  std::vector<Tensor> result(c.inputs.size());
  for (size_t i = 0; i < result.size(); ++i) {
    if (!needs[i]) continue;
    KILN_CHECK(grads[i], Status::internal, "op '", op.name, "' of plugin '", op.plugin_name,
               "': backward gave no gradient for input ", i, " ('", op.input_names[i], "'), which needs one");
    KILN_CHECK(grads[i]->runtime == op.runtime, Status::internal, "op '", op.name, "' of plugin '", op.plugin_name,
               "': backward gave input ", i, " a gradient of another runtime");
    const Tensor& g = grads[i]->tensor;
    KILN_CHECK(g.shape() == c.input_meta[i].shape, Status::shape_mismatch, "op '", op.name, "' of plugin '",
               op.plugin_name, "': backward gave input ", i, " ('", op.input_names[i], "') a gradient shaped ",
               to_string(g.shape()), ", the input is ", to_string(c.input_meta[i].shape));
    result[i] = g;
  }
  return result;
}

AttrSpec to_attr_spec(const kiln_attr_spec& spec, const std::string& op) {
  const kiln_attr& a = spec.attr;
  AttrSpec out{a.name, AttrType::integer, int64_t(0), spec.required != 0};
  switch (a.type) {
    case KILN_ATTR_INT: out.default_value = a.value.i; break;
    case KILN_ATTR_FLOAT: out.type = AttrType::real, out.default_value = a.value.f; break;
    case KILN_ATTR_BOOL: out.type = AttrType::boolean, out.default_value = a.value.b != 0; break;
    case KILN_ATTR_INTS:
      out.type = AttrType::ints;
      out.default_value = std::vector<int64_t>(a.value.ints.data, a.value.ints.data + a.value.ints.len);
      break;
    case KILN_ATTR_FLOATS:
      out.type = AttrType::reals;
      out.default_value = std::vector<double>(a.value.floats.data, a.value.floats.data + a.value.floats.len);
      break;
    case KILN_ATTR_STRING: out.type = AttrType::string, out.default_value = std::string(a.value.s ? a.value.s : ""); break;
    case KILN_ATTR_DTYPE: out.type = AttrType::dtype, out.default_value = to_dtype(a.value.dtype); break;
    case KILN_ATTR_TENSOR:
      throw_error(Status::invalid_argument,
                  str_cat("op '", op, "': attribute '", a.name, "' is a tensor; op attributes cannot be tensors"));
  }
  return out;
}

void check_type(const kiln_op_type& t) {
  KILN_CHECK(t.size >= sizeof(kiln_op_type), Status::invalid_argument, "an op type is ", t.size, " bytes, at least ",
             sizeof(kiln_op_type), " expected (set size to sizeof(kiln_op_type))");
  KILN_CHECK(t.name && *t.name, Status::invalid_argument, "an op type has no name");
  KILN_CHECK(t.infer, Status::invalid_argument, "op '", t.name, "' has no infer function");
  KILN_CHECK(t.cpu_kernel || t.cuda_kernel, Status::invalid_argument, "op '", t.name,
             "' has neither a CPU nor a CUDA kernel");
  KILN_CHECK(t.n_outputs >= 1, Status::invalid_argument, "op '", t.name, "' has no outputs (n_outputs is 0)");
  KILN_CHECK(t.input_names || t.n_inputs == 0, Status::invalid_argument, "op '", t.name, "': input_names is NULL with ",
             t.n_inputs, " inputs");
  for (size_t i = 0; i < t.n_inputs; ++i)
    KILN_CHECK(t.input_names[i] && *t.input_names[i], Status::invalid_argument, "op '", t.name, "': input ", i,
               " has no name");
  KILN_CHECK(t.dtypes && t.n_dtypes > 0, Status::invalid_argument, "op '", t.name,
             "' lists no dtypes for its kernels (dtypes/n_dtypes)");
}

}  // namespace

OpDef make_plugin_op(const kiln_op_type& type, kiln_runtime* rt, const std::string& plugin_name, PluginRef plugin) {
  check_type(type);
  auto op = std::make_shared<PluginOp>();
  op->name = type.name;
  op->attrs = ConfigSchema(type.attrs, type.n_attrs, str_cat("op '", op->name, "'"));
  op->input_names.assign(type.input_names, type.input_names + type.n_inputs);
  for (const std::string& n : op->input_names) op->input_name_pointers.push_back(n.c_str());
  op->dtypes.assign(type.dtypes, type.dtypes + type.n_dtypes);
  op->plugin_name = plugin_name;
  op->plugin = std::move(plugin);
  op->runtime = rt;
  op->type = type;
  op->type.size = sizeof(kiln_op_type);
  op->type.name = op->name.c_str();
  op->type.input_names = op->input_name_pointers.data();
  op->type.attrs = op->attrs.specs();
  op->type.dtypes = op->dtypes.data();

  OpDef def;
  def.name = op->name;
  for (const std::string& n : op->input_names) def.inputs.push_back({n});
  for (size_t i = 0; i < op->attrs.size(); ++i) def.attrs.push_back(to_attr_spec(op->attrs.specs()[i], op->name));
  def.infer = plugin_infer;
  if (type.backward) def.backward = plugin_backward;
  def.dtype_input = type.n_inputs > 0 ? 0 : -1;
  for (kiln_dtype d : op->dtypes) {
    const DType dtype = to_dtype(d);
    if (type.cpu_kernel) def.set_kernel(DeviceType::cpu, dtype, plugin_kernel);
    if (type.cuda_kernel) def.set_kernel(DeviceType::cuda, dtype, plugin_kernel);
  }
  def.extension = std::move(op);
  return def;
}

const std::string* plugin_of_op(const OpDef& op) {
  return op.infer == plugin_infer ? &plugin_op(op).plugin_name : nullptr;
}

}  // namespace kiln::abi

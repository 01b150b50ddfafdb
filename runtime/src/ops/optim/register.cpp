// The schemas and the shared infer function of the fused optimizer updates.
#include <string>

#include "kiln/kernels/builtin_ops.hpp"
#include "kiln/ops/helpers.hpp"
#include "optim_ops.hpp"

namespace kiln {
namespace optim {
namespace {

constexpr const char* kSgdLists[] = {"params", "grads", "momentum_buffers"};
constexpr const char* kAdamLists[] = {"params", "grads", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};

std::string joined(std::span<const char* const> names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// Every tensor against its parameter: one dtype for the whole call (the
// kernel is chosen by it), the parameter's shape, and dense memory, since
// the update writes in place and a dense copy would lose the writes.
void check_lists(const InferCall& c, std::span<const char* const> names) {
  const std::string& op = c.op.name;
  const size_t lists = names.size(), total = c.inputs.size();
  KILN_CHECK(total > 0 && total % lists == 0, Status::invalid_argument, "op '", op, "': ", total,
             " tensors do not make ", lists, " lists of one equal, non-zero length (", joined(names),
             "), one entry per parameter");
  const size_t n = total / lists;
  const DType dtype = c.inputs[0].dtype();
  KILN_CHECK(is_floating(dtype), Status::dtype_mismatch, "op '", op, "': params[0] is ", dtype_name(dtype),
             "; the update takes floating-point tensors");
  for (size_t list = 0; list < lists; ++list) {
    for (size_t i = 0; i < n; ++i) {
      const Tensor& t = list_entry(c.inputs, int(lists), int(list), i);
      const Tensor& param = list_entry(c.inputs, int(lists), 0, i);
      KILN_CHECK(t.dtype() == dtype, Status::dtype_mismatch, "op '", op, "': ", names[list], "[", i, "] is ",
                 dtype_name(t.dtype()), " but params[0] is ", dtype_name(dtype),
                 " (every tensor of one call has the parameters' dtype)");
      KILN_CHECK(t.shape() == param.shape(), Status::shape_mismatch, "op '", op, "': ", names[list], "[", i,
                 "] has shape ", to_string(t.shape()), " but params[", i, "] has ", to_string(param.shape()));
      KILN_CHECK(t.is_contiguous(), Status::invalid_argument, "op '", op, "': ", names[list], "[", i,
                 "] is a strided view; the update writes in place, so it takes contiguous tensors");
    }
  }
}

void sgd_infer(InferCall& c) { check_lists(c, sgd_list_names(c.op, c.attrs)); }

void adam_infer(InferCall& c) {
  const int64_t step = c.op.attr_int(c.attrs, "step");
  KILN_CHECK(step >= 1, Status::invalid_argument, "op '", c.op.name,
             "': step must be at least 1 (the first update), got ", step);
  check_lists(c, adam_list_names(c.op, c.attrs));
}

OpDef update_op(std::string name, InferFn infer, std::vector<AttrSpec> attrs) {
  OpDef d;
  d.name = std::move(name);
  d.inputs = {{"tensors", false, true}};
  d.attrs = std::move(attrs);
  d.infer = infer;
  d.accepts_strided = true;  // refused in infer: see check_lists
  d.writes_inputs = true;
  d.saves_inputs = d.saves_outputs = false;
  return d;
}

}  // namespace

std::span<const char* const> sgd_list_names(const OpDef& op, const Attrs& attrs) {
  return {kSgdLists, op.attr_real(attrs, "momentum") != 0 ? 3u : 2u};
}

std::span<const char* const> adam_list_names(const OpDef& op, const Attrs& attrs) {
  return {kAdamLists, op.attr_bool(attrs, "amsgrad") ? 5u : 4u};
}

}  // namespace optim

void register_optim_ops(OpRegistry& r) {
  r.add(optim::update_op("sgd_update", optim::sgd_infer,
                         {attr_required("lr", AttrType::real), attr_real("momentum", 0.0), attr_real("dampening", 0.0),
                          attr_bool("nesterov", false), attr_real("weight_decay", 0.0), attr_bool("maximize", false),
                          attr_bool("first_step", false)}));
  r.add(optim::update_op("adam_update", optim::adam_infer,
                         {attr_required("lr", AttrType::real), attr_real("beta1", 0.9), attr_real("beta2", 0.999),
                          attr_real("eps", 1e-8), attr_real("weight_decay", 0.0), attr_bool("decoupled", false),
                          attr_bool("amsgrad", false), attr_bool("maximize", false),
                          attr_required("step", AttrType::integer)}));
  optim::register_cpu_kernels(r);
#ifdef KILN_WITH_CUDA
  optim::register_cuda_kernels(r);
#endif
}

}  // namespace kiln

#include "ops/torch/fixture_run.hpp"

#include <algorithm>

#include "kiln/error.hpp"
#include "ops/torch/attr_parse.hpp"

namespace kiln::test {
namespace {

std::string input_base_name(const std::string& name) { return name.substr(0, name.find('.')); }

// The fixture's inputs must be the op's, in its order: a renamed or
// reordered input would otherwise be fed silently to the wrong place.
std::string schema_fault(const OpDef& op, const FixtureCase& c) {
  if (op.inputs.empty()) return c.input_names.empty() ? "" : "kiln's op takes no inputs";
  for (size_t i = 0; i < c.input_names.size(); ++i) {
    const InputSpec& spec = op.inputs[std::min(i, op.inputs.size() - 1)];
    if (input_base_name(c.input_names[i]) != spec.name || (i >= op.inputs.size() && !spec.variadic))
      return str_cat("input ", i, " is '", c.input_names[i], "' in the fixture but '", spec.name, "' in kiln");
  }
  return "";
}

Tensor gradient_or_zeros(Runtime& rt, const Tensor& input) {
  Tensor g = input.grad();
  return g.defined() ? g : rt.full(input.shape(), 0.0, input.dtype());
}

}  // namespace

CaseResult run_fixture_case(Runtime& rt, const std::string& op_name, const FixtureCase& c) {
  CaseResult result;
  const std::string where = str_cat("case ", c.index, " (", c.label, ")");
  auto fail = [&](const std::string& what) { result.failures.push_back(str_cat(where, ": ", what)); };
  try {
    const OpDef& op = rt.op(op_name);
    if (const std::string fault = schema_fault(op, c); !fault.empty()) {
      fail(fault);
      return result;
    }
    const bool with_grads = c.checks_gradients();
    // Fresh leaves, so that the stored tensors keep no gradient.
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      inputs.push_back(c.inputs[i].defined() ? c.inputs[i].detach() : Tensor());
      if (with_grads && c.grads[i].defined()) inputs[i].set_requires_grad(true);
    }

    const std::vector<Tensor> outputs = rt.call(op, inputs, parse_attrs(op, c.attrs));
    if (outputs.size() != c.outputs.size()) {
      fail(str_cat(outputs.size(), " outputs, PyTorch gives ", c.outputs.size()));
      return result;
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Difference d = compare_tensors(rt, outputs[k], c.outputs[k]);
      if (!d.ok()) fail(str_cat("output ", k, ": ", d.failure));
      result.outputs.merge(d);
    }
    if (!with_grads) return result;

    std::vector<Tensor> roots, weights;
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!c.weights[k].defined()) continue;
      roots.push_back(outputs[k]);
      weights.push_back(c.weights[k]);
    }
    rt.backward(roots, weights);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!c.grads[i].defined()) continue;
      const Difference d = compare_tensors(rt, gradient_or_zeros(rt, inputs[i]), c.grads[i]);
      if (!d.ok()) fail(str_cat("gradient of ", c.input_names[i], ": ", d.failure));
      result.grads.merge(d);
    }
  } catch (const Error& e) {
    fail(e.what());
  }
  return result;
}

}  // namespace kiln::test

#include "linear_activation.hpp"

#include <array>
#include <string_view>

#include "kiln/error.hpp"

namespace kiln::nn {
namespace {

struct ActivationName {
  std::string_view name;
  LinearActivation activation;
};

constexpr std::array<ActivationName, 3> kActivations = {{{"none", LinearActivation::none},
                                                         {"relu", LinearActivation::relu},
                                                         {"gelu_tanh", LinearActivation::gelu_tanh}}};

}  // namespace

LinearActivation linear_activation(const OpDef& op, const Attrs& attrs) {
  const std::string& name = op.attr_string(attrs, "activation");
  for (const ActivationName& a : kActivations)
    if (a.name == name) return a.activation;
  std::string accepted;
  for (const ActivationName& a : kActivations) accepted += str_cat(accepted.empty() ? "" : ", ", "\"", a.name, "\"");
  throw_error(Status::invalid_argument, str_cat("op '", op.name, "': unknown activation \"", name, "\" (accepted: ",
                                                accepted, "; GELU is fused only in its tanh form)"));
}

ActivationCall activation_call(Runtime& rt, LinearActivation activation, bool backward) {
  KILN_CHECK(activation != LinearActivation::none, Status::internal, "linear: no op computes activation \"none\"");
  const bool relu = activation == LinearActivation::relu;
  const OpDef& op = rt.op(str_cat(relu ? "relu" : "gelu", backward ? "_backward" : ""));
  return {op, relu ? op.default_attrs() : op.make_attrs({{"approximate", std::string("tanh")}})};
}

}  // namespace kiln::nn

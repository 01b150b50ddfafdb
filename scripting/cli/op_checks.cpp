#include "registration_checks.hpp"

namespace kiln::cli {
namespace {

constexpr size_t kMaxInputs = 3;
const std::vector<int64_t> kInputShape = {2, 4};

void check_op(kiln_runtime* rt, const std::string& name, const DeviceTarget& device, CheckReport* report) {
  const std::string subject = "op " + name;
  const kiln_op* op = nullptr;
  kiln_module* wrapped = nullptr;
  if (kiln_op_find(rt, name.c_str(), &op) != KILN_OK || kiln_module_from_op(rt, op, nullptr, 0, &wrapped) != KILN_OK)
    return report->record(subject, "call", {Verdict::kFail, kiln_last_error()});
  const ModulePtr module = module_ptr(wrapped);
  std::vector<TensorPtr> owned;
  std::vector<kiln_tensor*> inputs;
  // Which refusal names the real reason depends on the op's arity, which
  // is not known: the first and the last are reported.
  std::string refusals;
  bool accepted = false;
  while (!accepted && inputs.size() < kMaxInputs) {
    owned.push_back(random_input(rt, kInputShape, owned.size() + 1));
    inputs.push_back(owned.back().get());
    accepted = forward_no_grad(rt, module.get(), inputs) != nullptr;
    if (!accepted && (inputs.size() == 1 || inputs.size() == kMaxInputs))
      refusals += (refusals.empty() ? "" : "; ") + std::to_string(inputs.size()) + " input(s): " + kiln_last_error();
  }
  if (!accepted)
    return report->record(subject, "call",
                          {Verdict::kSkip, "no call with 1 to 3 f64 inputs of shape 2x4 and no attributes succeeds "
                                           "(the C API has no op schema to build others from); with " +
                                               refusals});
  report->record(subject, "call", {Verdict::kPass, std::to_string(inputs.size()) + " f64 input(s) of shape 2x4"});
  report->record(subject, "gradient against finite differences", check_gradients(rt, module.get(), inputs));
  report->record(subject, "cuda against cpu", check_on_device(rt, module.get(), inputs, device));
}

}  // namespace

void check_ops(kiln_runtime* rt, const std::vector<std::string>& names, const DeviceTarget& device,
               CheckReport* report) {
  for (const std::string& name : names) check_op(rt, name, device, report);
}

}  // namespace kiln::cli

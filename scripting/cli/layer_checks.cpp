#include "layer_config.hpp"
#include "registration_checks.hpp"

namespace kiln::cli {
namespace {

const std::vector<std::vector<int64_t>> kInputShapes = {{2, 4}, {2, 4, 4}, {2, 4, 4, 4}};
constexpr uint64_t kInputSeed = 11;

// A layer of `type`, f64, in eval mode (so that Dropout and the batch
// norms give the same output every call); nullptr with kiln_last_error().
ModulePtr create_layer(kiln_runtime* rt, const std::string& type, const LayerConfig* config) {
  kiln_module* m = nullptr;
  if (kiln_module_create(rt, type.c_str(), config ? config->data() : nullptr, config ? config->size() : 0, &m) !=
      KILN_OK)
    return module_ptr(nullptr);
  ModulePtr module = module_ptr(m);
  if (kiln_module_cast(m, KILN_F64) != KILN_OK || kiln_module_set_training(m, 0) != KILN_OK) return module_ptr(nullptr);
  return module;
}

void check_layer(kiln_runtime* rt, const std::string& type, const DeviceTarget& device, CheckReport* report) {
  const std::string subject = "layer " + type;
  std::optional<LayerConfig> config;
  ModulePtr module = create_layer(rt, type, nullptr);
  std::string built_with = "its default config";
  if (!module) {
    std::string why;
    config = LayerConfig::for_layer(rt, type, &why);
    if (!config) return report->record(subject, "build", {Verdict::kSkip, why});
    module = create_layer(rt, type, &*config);
    built_with = config->description();
    if (!module)
      return report->record(subject, "build", {Verdict::kSkip, "with " + built_with + ": " + kiln_last_error()});
  }
  report->record(subject, "build", {Verdict::kPass, built_with});

  TensorPtr input = tensor_ptr(nullptr);
  std::string refusal, shape_text;
  for (const std::vector<int64_t>& shape : kInputShapes) {
    input = random_input(rt, shape, kInputSeed);
    if (input && forward_no_grad(rt, module.get(), {input.get()})) {
      for (int64_t d : shape) shape_text += (shape_text.empty() ? "" : "x") + std::to_string(d);
      break;
    }
    refusal = kiln_last_error();
    input.reset();
  }
  if (!input)
    return report->record(subject, "forward",
                          {Verdict::kSkip,
                           "no f64 input of shape 2x4, 2x4x4 or 2x4x4x4 fits; the last said: " + refusal});
  const std::vector<kiln_tensor*> inputs = {input.get()};
  report->record(subject, "forward", {Verdict::kPass, "f64 input of shape " + shape_text});
  const ModulePtr fresh = create_layer(rt, type, config ? &*config : nullptr);
  if (!fresh)
    report->record(subject, "weights save/load round trip",
                   {Verdict::kFail, std::string("a second instance: ") + kiln_last_error()});
  else
    report->record(subject, "weights save/load round trip",
                   check_weights_round_trip(rt, module.get(), fresh.get(), inputs, type));
  report->record(subject, "gradient against finite differences", check_gradients(rt, module.get(), inputs));
  report->record(subject, "cuda against cpu", check_on_device(rt, module.get(), inputs, device));
}

}  // namespace

void check_layers(kiln_runtime* rt, const std::vector<std::string>& types, const DeviceTarget& device,
                  CheckReport* report) {
  for (const std::string& type : types) check_layer(rt, type, device, report);
}

}  // namespace kiln::cli

// kiln_weights_save / kiln_weights_load and kiln_safetensors_save /
// kiln_safetensors_load: a model's weights, and any named tensors, as
// safetensors files.
#include <string>

#include "checkpoint/module_state.hpp"
#include "data/example.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "module/module_handle.hpp"

using kiln::abi::guarded;

namespace {

kiln::Runtime& runtime_of(const kiln_module* m) { return m->runtime->runtime; }

}  // namespace

extern "C" {

kiln_status kiln_safetensors_save(const kiln_example* tensors, const char* path) {
  KILN_REQUIRE(tensors, path);
  return guarded(__func__, [&] {
    kiln::abi::StateTensors list;
    {
      std::lock_guard lock(tensors->mutex);
      for (const kiln_example::Field& f : tensors->fields) list.push_back({f.name, f.tensor->tensor});
    }
    kiln::abi::save_named_tensors(tensors->runtime->runtime, path, list, {});
  });
}

kiln_status kiln_safetensors_load(kiln_runtime* rt, const char* path, kiln_example** out) {
  KILN_REQUIRE(rt, path, out);
  return guarded(__func__, [&] {
    const kiln::checkpoint::SafetensorsReader file(path);
    auto example = std::make_unique<kiln_example>(rt);
    for (const kiln::checkpoint::TensorEntry& e : file.header().tensors)
      example->fields.push_back({e.name, kiln::abi::new_handle(rt, kiln::abi::read_entry(rt->runtime, file, e))});
    *out = example.release();
  });
}

kiln_status kiln_weights_save(kiln_module* model, const char* path) {
  KILN_REQUIRE(model, path);
  return guarded(__func__, [&] {
    kiln::abi::save_named_tensors(runtime_of(model), path, kiln::abi::module_state(model), {});
  });
}

kiln_status kiln_weights_load(kiln_module* model, const char* path, int strict) {
  KILN_REQUIRE(model, path);
  return guarded(__func__, [&] {
    kiln::Runtime& rt = runtime_of(model);
    const kiln::checkpoint::SafetensorsReader file(path);
    const auto plan = kiln::abi::plan_assignments(rt, file, kiln::abi::module_state(model), "", strict != 0,
                                                   kiln::str_cat("the model (", model->module->type(), ")"));
    kiln::abi::apply_assignments(rt, plan);
  });
}

}  // extern "C"

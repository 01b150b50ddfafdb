// Listing a runtime's ops through the C API: what `kiln ops` prints and what
// bindings make methods from. Everything given out points into the op's
// definition or its handle, both of which live as long as the runtime.
#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "plugin/plugin_op.hpp"

using kiln::abi::guarded;

namespace {

// Bit (1 << kiln_dtype) for each dtype with a kernel on `device`.
uint32_t kernel_dtypes(const kiln::OpDef& def, kiln::DeviceType device) {
  uint32_t bits = 0;
  for (int t = 0; t < kiln::kNumDTypes; ++t)
    if (def.kernel(device, kiln::DType(t))) bits |= 1u << unsigned(kiln::abi::from_dtype(kiln::DType(t)));
  return bits;
}

void check_index(const kiln::OpDef& def, size_t index, size_t count, const char* what) {
  KILN_CHECK(index < count, kiln::Status::invalid_argument, what, " index ", index, " is out of range: op '",
             def.name, "' has ", count, " ", what, count == 1 ? "" : "s");
}

}  // namespace

extern "C" {

kiln_status kiln_op_count(kiln_runtime* rt, size_t* count) {
  KILN_REQUIRE(rt, count);
  return guarded(__func__, [&] { *count = rt->runtime.registry().names().size(); });
}

kiln_status kiln_op_at(kiln_runtime* rt, size_t index, const kiln_op** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    const std::vector<std::string> names = rt->runtime.registry().names();  // sorted
    KILN_CHECK(index < names.size(), kiln::Status::invalid_argument, "op index ", index,
               " is out of range: the runtime has ", names.size(), " ops (see kiln_op_count)");
    *out = kiln::abi::op_handle(rt, rt->runtime.op(names[index]));
  });
}

kiln_status kiln_op_info_get(const kiln_op* op, kiln_op_info* out) {
  KILN_REQUIRE(op, out);
  return guarded(__func__, [&] {
    kiln::abi::check_struct_size(out->size, "kiln_op_info");
    const kiln::OpDef& def = *op->def;
    const std::string* plugin = kiln::abi::plugin_of_op(def);
    if (KILN_HAS_FIELD(out, name)) out->name = def.name.c_str();
    if (KILN_HAS_FIELD(out, plugin)) out->plugin = plugin ? plugin->c_str() : "";
    if (KILN_HAS_FIELD(out, num_inputs)) out->num_inputs = def.inputs.size();
    if (KILN_HAS_FIELD(out, num_attrs)) out->num_attrs = def.attrs.size();
    if (KILN_HAS_FIELD(out, has_backward)) out->has_backward = def.backward != nullptr;
    if (KILN_HAS_FIELD(out, writes_inputs)) out->writes_inputs = def.writes_inputs;
    if (KILN_HAS_FIELD(out, is_view)) out->is_view = def.view != nullptr;
    if (KILN_HAS_FIELD(out, cpu_dtypes)) out->cpu_dtypes = kernel_dtypes(def, kiln::DeviceType::cpu);
    if (KILN_HAS_FIELD(out, cuda_dtypes)) out->cuda_dtypes = kernel_dtypes(def, kiln::DeviceType::cuda);
  });
}

kiln_status kiln_op_input_get(const kiln_op* op, size_t index, kiln_op_input_info* out) {
  KILN_REQUIRE(op, out);
  return guarded(__func__, [&] {
    kiln::abi::check_struct_size(out->size, "kiln_op_input_info");
    const kiln::OpDef& def = *op->def;
    check_index(def, index, def.inputs.size(), "input");
    const kiln::InputSpec& input = def.inputs[index];
    if (KILN_HAS_FIELD(out, name)) out->name = input.name.c_str();
    if (KILN_HAS_FIELD(out, optional)) out->optional = input.optional;
    if (KILN_HAS_FIELD(out, variadic)) out->variadic = input.variadic;
  });
}

kiln_status kiln_op_attr_get(const kiln_op* op, size_t index, kiln_op_attr_info* out) {
  KILN_REQUIRE(op, out);
  return guarded(__func__, [&] {
    kiln::abi::check_struct_size(out->size, "kiln_op_attr_info");
    const kiln::OpDef& def = *op->def;
    check_index(def, index, def.attrs.size(), "attribute");
    const kiln::AttrSpec& attr = def.attrs[index];
    if (KILN_HAS_FIELD(out, name)) out->name = attr.name.c_str();
    if (KILN_HAS_FIELD(out, type)) out->type = kiln_attr_type(attr.type);
    if (KILN_HAS_FIELD(out, required)) out->required = attr.required;
    if (KILN_HAS_FIELD(out, default_text)) out->default_text = op->default_texts[index].c_str();
    if (KILN_HAS_FIELD(out, default_value)) {
      kiln_attr value{};
      if (!attr.required) value = kiln::abi::to_c_attr(attr.name.c_str(), attr.default_value);
      value.name = attr.name.c_str();
      value.type = kiln_attr_type(attr.type);
      out->default_value = value;
    }
  });
}

}  // extern "C"

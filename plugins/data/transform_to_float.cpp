// "to_float": converts a field to f32 and multiplies it by `scale`
// (scale 1/255 turns u8 pixels into [0, 1]).
#include "transforms.hpp"

namespace kiln_data {
namespace {

struct ToFloat {
  kiln_runtime* runtime;
  double scale;
  std::string field;

  ToFloat(kiln_runtime* rt, const kiln_attr* config)
      : runtime(rt), scale(config[0].value.f), field(config_string(config[1])) {}

  void apply(kiln_example* ex, uint64_t) const {
    const FieldTensor in = read_field(ex, field, "to_float");
    FieldTensor out = new_field_tensor(runtime, in.shape, KILN_F32);
    auto* dst = static_cast<float*>(out.data);
    const int64_t n = numel(in.shape);
    visit_dtype(in.desc.dtype, "to_float input", [&](auto zero) {
      const auto* src = static_cast<const decltype(zero)*>(in.data);
      for (int64_t i = 0; i < n; ++i) dst[i] = float(double(src[i]) * scale);
    });
    write_field(ex, field, out);
  }
};

}  // namespace

kiln_status register_to_float(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_float("scale", 1.0), 0, "factor applied after the conversion"},
      {kiln_attr_string("field", "input"), 0, "the field converted"},
  };
  return register_transform<ToFloat>(r, "to_float", config, 2);
}

}  // namespace kiln_data

// "one_hot": an integer field (a class index, or a tensor of them) becomes
// f32 vectors of length num_classes with a 1 at the index.
#include "transforms.hpp"

namespace kiln_data {
namespace {

struct OneHot {
  kiln_runtime* runtime;
  int64_t num_classes;
  std::string field;

  OneHot(kiln_runtime* rt, const kiln_attr* config)
      : runtime(rt), num_classes(config[0].value.i), field(config_string(config[1])) {
    if (num_classes < 1) fail(KILN_ERR_INVALID_ARGUMENT, "'num_classes' is ", num_classes, "; expected >= 1");
  }

  void apply(kiln_example* ex, uint64_t) const {
    const FieldTensor in = read_field(ex, field, "one_hot");
    const kiln_dtype dtype = in.desc.dtype;
    if (dtype != KILN_I64 && dtype != KILN_I32 && dtype != KILN_U8)
      fail(KILN_ERR_DTYPE_MISMATCH, "one_hot: field '", field, "' is ", dtype_name(dtype),
           "; expected class indices (i64, i32 or u8)");
    std::vector<int64_t> out_shape = in.shape;
    out_shape.push_back(num_classes);
    FieldTensor out = new_field_tensor(runtime, out_shape, KILN_F32);
    auto* dst = static_cast<float*>(out.data);
    const int64_t n = numel(in.shape);
    visit_dtype(dtype, "one_hot input", [&](auto zero) {
      const auto* src = static_cast<const decltype(zero)*>(in.data);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t index = int64_t(src[i]);
        if (index < 0 || index >= num_classes)
          fail(KILN_ERR_INVALID_ARGUMENT, "one_hot: index ", index, " of field '", field, "' is outside [0, ",
               num_classes, ")");
        float* row = dst + i * num_classes;
        for (int64_t c = 0; c < num_classes; ++c) row[c] = c == index ? 1.0f : 0.0f;
      }
    });
    write_field(ex, field, out);
  }
};

}  // namespace

kiln_status register_one_hot(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_int("num_classes", 0), 1, "length of the vectors"},
      {kiln_attr_string("field", "target"), 0, "the field converted"},
  };
  return register_transform<OneHot>(r, "one_hot", config, 2);
}

}  // namespace kiln_data

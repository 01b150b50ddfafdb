// "normalize": (x - mean[c]) / std[c] for each channel c of an f32 C,H,W
// input, or with one mean and std for every element.
#include "transforms.hpp"

namespace kiln_data {
namespace {

struct Normalize {
  kiln_runtime* runtime;
  std::vector<double> mean, std;

  Normalize(kiln_runtime* rt, const kiln_attr* config)
      : runtime(rt), mean(config_floats(config[0])), std(config_floats(config[1])) {
    if (mean.empty() || mean.size() != std.size())
      fail(KILN_ERR_INVALID_ARGUMENT, "'mean' has ", mean.size(), " values and 'std' ", std.size(),
           "; expected the same number, at least one");
    for (size_t c = 0; c < std.size(); ++c)
      if (!(std[c] != 0.0)) fail(KILN_ERR_INVALID_ARGUMENT, "'std' value ", c, " is ", std[c], "; expected nonzero");
  }

  void apply(kiln_example* ex, uint64_t) const {
    FieldTensor x = read_field(ex, "input", "normalize");
    if (x.desc.dtype != KILN_F32)
      fail(KILN_ERR_DTYPE_MISMATCH, "normalize: the input is ", dtype_name(x.desc.dtype),
           shape_text(x.shape), "; expected f32 (apply to_float first)");
    const int64_t n = numel(x.shape);
    int64_t channels = 1;
    if (mean.size() > 1) {
      if (x.shape.size() != 3 || x.shape[0] != int64_t(mean.size()))
        fail(KILN_ERR_SHAPE_MISMATCH, "normalize: 'mean' and 'std' have ", mean.size(),
             " values (one per channel), the input is ", shape_text(x.shape), "; expected a C,H,W input with C = ",
             mean.size());
      channels = x.shape[0];
    }
    FieldTensor out = new_field_tensor(runtime, x.shape, KILN_F32);
    const auto* src = static_cast<const float*>(x.data);
    auto* dst = static_cast<float*>(out.data);
    const int64_t plane = n / channels;
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = c * plane; i < (c + 1) * plane; ++i) dst[i] = float((src[i] - mean[size_t(c)]) / std[size_t(c)]);
    write_field(ex, "input", out);
  }
};

}  // namespace

kiln_status register_normalize(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_floats("mean", nullptr, 0), 1, "per channel, or one value for all"},
      {kiln_attr_floats("std", nullptr, 0), 1, "per channel, or one value for all"},
  };
  return register_transform<Normalize>(r, "normalize", config, 2);
}

}  // namespace kiln_data

// "random_hflip": reverses the last dimension (W) of the input with
// probability p, the choice drawn from the seed.
#include <cstring>

#include "random.hpp"
#include "transforms.hpp"

namespace kiln_data {
namespace {

struct RandomHflip {
  kiln_runtime* runtime;
  double p;

  RandomHflip(kiln_runtime* rt, const kiln_attr* config) : runtime(rt), p(config[0].value.f) {
    if (!(p >= 0.0 && p <= 1.0)) fail(KILN_ERR_INVALID_ARGUMENT, "'p' is ", p, "; expected a probability in [0, 1]");
  }

  void apply(kiln_example* ex, uint64_t seed) const {
    if (!(uniform_float(philox_word(seed, kRandomHflipStream)) < p)) return;
    const FieldTensor in = read_field(ex, "input", "random_hflip");
    if (in.shape.empty())
      fail(KILN_ERR_SHAPE_MISMATCH, "random_hflip: the input is a scalar; expected at least one dimension");
    FieldTensor out = new_field_tensor(runtime, in.shape, in.desc.dtype);
    const size_t elem = dtype_size(in.desc.dtype);
    const int64_t width = in.shape.back();
    const int64_t rows = width == 0 ? 0 : numel(in.shape) / width;
    const auto* src = static_cast<const unsigned char*>(in.data);
    auto* dst = static_cast<unsigned char*>(out.data);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t x = 0; x < width; ++x)
        std::memcpy(dst + size_t(r * width + x) * elem, src + size_t(r * width + (width - 1 - x)) * elem, elem);
    write_field(ex, "input", out);
  }
};

}  // namespace

kiln_status register_random_hflip(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_float("p", 0.5), 0, "probability of flipping"},
  };
  return register_transform<RandomHflip>(r, "random_hflip", config, 1);
}

}  // namespace kiln_data

// "random_crop": pads the last two dimensions (H, W) of an input by
// `padding` on every side with `fill`, then cuts a size[0] x size[1] window
// at a position drawn from the seed, as torchvision's RandomCrop.
#include <cstring>

#include "random.hpp"
#include "transforms.hpp"

namespace kiln_data {
namespace {

struct RandomCrop {
  kiln_runtime* runtime;
  int64_t height, width, padding;
  double fill;

  RandomCrop(kiln_runtime* rt, const kiln_attr* config) : runtime(rt), padding(config[1].value.i), fill(config[2].value.f) {
    const std::vector<int64_t> size = config_ints(config[0]);
    if (size.empty() || size.size() > 2 || size[0] < 1 || size.back() < 1)
      fail(KILN_ERR_INVALID_ARGUMENT, "'size' is ", shape_text(size), "; expected [size] or [height, width], positive");
    height = size[0];
    width = size.back();
    if (padding < 0) fail(KILN_ERR_INVALID_ARGUMENT, "'padding' is ", padding, "; expected >= 0");
  }

  void apply(kiln_example* ex, uint64_t seed) const {
    const FieldTensor in = read_field(ex, "input", "random_crop");
    const size_t rank = in.shape.size();
    if (rank < 2)
      fail(KILN_ERR_SHAPE_MISMATCH, "random_crop: the input is ", shape_text(in.shape), "; expected H,W or C,H,W");
    const int64_t in_h = in.shape[rank - 2], in_w = in.shape[rank - 1];
    const int64_t padded_h = in_h + 2 * padding, padded_w = in_w + 2 * padding;
    if (padded_h < height || padded_w < width)
      fail(KILN_ERR_SHAPE_MISMATCH, "random_crop: a ", height, "x", width, " crop does not fit the input ",
           shape_text(in.shape), " padded by ", padding);
    uint32_t block[4];
    host->philox(seed, kRandomCropStream, block);
    const int64_t top = int64_t(uniform_below(block[0], uint64_t(padded_h - height + 1))) - padding;
    const int64_t left = int64_t(uniform_below(block[1], uint64_t(padded_w - width + 1))) - padding;

    std::vector<int64_t> out_shape = in.shape;
    out_shape[rank - 2] = height;
    out_shape[rank - 1] = width;
    FieldTensor out = new_field_tensor(runtime, out_shape, in.desc.dtype);
    const size_t elem = dtype_size(in.desc.dtype);
    unsigned char fill_bytes[8];
    visit_dtype(in.desc.dtype, "random_crop input", [&](auto zero) {
      const auto value = decltype(zero)(fill);
      std::memcpy(fill_bytes, &value, sizeof value);
    });
    const int64_t planes = numel(in.shape) / (in_h * in_w);
    const auto* src = static_cast<const unsigned char*>(in.data);
    auto* dst = static_cast<unsigned char*>(out.data);
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x, dst += elem) {
          const int64_t sy = top + y, sx = left + x;
          const bool inside = sy >= 0 && sy < in_h && sx >= 0 && sx < in_w;
          std::memcpy(dst, inside ? src + size_t((p * in_h + sy) * in_w + sx) * elem : fill_bytes, elem);
        }
    write_field(ex, "input", out);
  }
};

}  // namespace

kiln_status register_random_crop(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_ints("size", nullptr, 0), 1, "[size] for a square crop, or [height, width]"},
      {kiln_attr_int("padding", 0), 0, "padding added on every side before cropping"},
      {kiln_attr_float("fill", 0.0), 0, "value of the padding"},
  };
  return register_transform<RandomCrop>(r, "random_crop", config, 3);
}

}  // namespace kiln_data

// upsample_nearest2d and upsample_bilinear2d: values computed by PyTorch
// 2.15 (torch.nn.functional.interpolate), a plain double reference over
// several shapes, scales and dtypes, gradients against finite differences,
// and argument errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Ints = std::vector<int64_t>;
using Reals = std::vector<double>;

// x[i] = i * i / 7 - i, as [1, 1, 3, 5]: the input of the PyTorch values below.
Tensor fixture_input(Runtime& rt) {
  std::vector<double> v;
  for (int i = 0; i < 15; ++i) v.push_back(double(i) * i / 7 - i);
  return make_tensor(rt, {1, 1, 3, 5}, v);
}

// One axis of interpolate: the source coordinate of output index o.
double source(int64_t o, int64_t in, int64_t out, double scale_factor, bool align_corners, bool linear) {
  if (align_corners) return out > 1 ? double(o) * double(in - 1) / double(out - 1) : 0.0;
  const double step = scale_factor > 0 ? 1.0 / scale_factor : double(in) / double(out);
  if (!linear) return std::floor(double(o) * step);
  return std::max(0.0, (double(o) + 0.5) * step - 0.5);
}

// Plain loops over doubles for [N, C, H, W]; scale factors of 0 mean "by size".
std::vector<double> upsample_reference(const std::vector<double>& x, const Shape& s, int64_t oh, int64_t ow, double sh,
                                       double sw, bool linear, bool align_corners) {
  const int64_t h = s[2], w = s[3];
  std::vector<double> y;
  for (int64_t p = 0; p < s[0] * s[1]; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const double fy = source(i, h, oh, sh, align_corners, linear), fx = source(j, w, ow, sw, align_corners, linear);
        const int64_t y0 = std::min<int64_t>(int64_t(fy), h - 1), x0 = std::min<int64_t>(int64_t(fx), w - 1);
        const auto at = [&](int64_t a, int64_t b) { return x[size_t((p * h + a) * w + b)]; };
        if (!linear) {
          y.push_back(at(y0, x0));
          continue;
        }
        const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
        const double ly = fy - double(y0), lx = fx - double(x0);
        y.push_back((1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) +
                    ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1)));
      }
  return y;
}

}  // namespace

TEST_CASE("upsample matches PyTorch's interpolate", "[nn][upsample]") {
  Runtime rt;
  const Tensor x = fixture_input(rt);
  const std::vector<double> nearest_4x7 = {
      0,      0,      -0.8571428571, -1.428571429, -1.428571429, -1.714285714, -1.714285714, 0,
      0,      -0.8571428571, -1.428571429, -1.428571429, -1.714285714, -1.714285714, -1.428571429, -1.428571429,
      -0.8571428571, 0, 0, 1.142857143, 2.571428571, 4.285714286, 4.285714286, 6.285714286,
      8.571428571, 8.571428571, 11.14285714, 14};
  const std::vector<double> bilinear_4x7 = {
      0,           -0.4897959184, -1.020408163, -1.428571429, -1.632653061, -1.714285714, -1.714285714,
      -0.8928571429, -0.8724489796, -0.7653061224, -0.5357142857, -0.1020408163, 0.4540816327, 0.9642857143,
      0.7142857143, 1.346938776, 2.219387755, 3.214285714, 4.413265306, 5.734693878, 6.857142857,
      4.285714286, 5.428571429, 6.93877551, 8.571428571, 10.40816327, 12.36734694, 14};
  const std::vector<double> bilinear_4x7_aligned = {
      0,           -0.5714285714, -1.047619048, -1.428571429, -1.619047619, -1.714285714, -1.714285714,
      -0.9523809524, -0.8888888889, -0.7301587302, -0.4761904762, -0.03174603175, 0.5079365079, 1.142857143,
      0.4761904762, 1.174603175, 1.968253968, 2.857142857, 3.936507937, 5.111111111, 6.380952381,
      4.285714286, 5.619047619, 7.047619048, 8.571428571, 10.28571429, 12.0952381, 14};
  // A scale_factor samples at 1 / scale_factor, not at in / out (5 rows from 3 at 1.7, 3 columns from 5 at 0.6).
  const std::vector<double> bilinear_scaled = {
      -0.2857142857, -1.428571429, -1.714285714, -0.649859944, -0.8823529412, -0.2577030812, -1.210084034,
      -0.04201680672, 1.983193277, 2.221288515, 4.789915966, 8.215686275, 4.952380952, 8.571428571, 13.04761905};

  const Tensor nearest = rt.call1("upsample_nearest2d", {x}, {{"size", Ints{4, 7}}});
  CHECK(nearest.shape() == Shape{1, 1, 4, 7});
  require_close(rt, nearest, nearest_4x7, 1e-8, 1e-8);
  require_close(rt, rt.call1("upsample_nearest2d", {x}, {{"scale_factor", Reals{0.5}}}), {0, -1.428571429}, 1e-8,
                1e-8);
  require_close(rt, rt.call1("upsample_bilinear2d", {x}, {{"size", Ints{4, 7}}}), bilinear_4x7, 1e-8, 1e-8);
  require_close(rt, rt.call1("upsample_bilinear2d", {x}, {{"size", Ints{4, 7}}, {"align_corners", true}}),
                bilinear_4x7_aligned, 1e-8, 1e-8);
  const Tensor scaled = rt.call1("upsample_bilinear2d", {x}, {{"scale_factor", Reals{1.7, 0.6}}});
  CHECK(scaled.shape() == Shape{1, 1, 5, 3});
  require_close(rt, scaled, bilinear_scaled, 1e-8, 1e-8);
}

TEST_CASE("upsample matches the reference across shapes, scales and dtypes", "[nn][upsample]") {
  Runtime rt;
  struct Case {
    Shape input;
    Ints size;
    Reals scale;
  };
  const std::vector<Case> cases = {{{2, 3, 4, 5}, {8, 10}, {}}, {{1, 2, 3, 3}, {}, {2.0}},
                                   {{2, 1, 5, 4}, {3, 2}, {}},  {{1, 2, 4, 6}, {}, {1.5, 0.5}},
                                   {{3, 2, 1, 1}, {2, 3}, {}},  {{1, 1, 2, 7}, {5}, {}}};
  for (DType t : {DType::f32, DType::f64})
    for (const Case& k : cases)
      for (int mode = 0; mode < 3; ++mode) {
        const bool linear = mode > 0, align_corners = mode == 2;
        INFO(dtype_name(t) << " input " << to_string(k.input) << " mode " << mode);
        const Tensor x = random_tensor(rt, k.input, t, -2.0, 2.0, 71);
        const char* op = linear ? "upsample_bilinear2d" : "upsample_nearest2d";
        const Tensor y =
            linear ? rt.call1(op, {x}, {{"size", k.size}, {"scale_factor", k.scale}, {"align_corners", align_corners}})
                   : rt.call1(op, {x}, {{"size", k.size}, {"scale_factor", k.scale}});
        const double sh = k.scale.empty() ? 0 : k.scale[0], sw = k.scale.empty() ? 0 : k.scale.back();
        const int64_t oh = k.size.empty() ? int64_t(std::floor(double(k.input[2]) * sh)) : k.size[0];
        const int64_t ow = k.size.empty() ? int64_t(std::floor(double(k.input[3]) * sw)) : k.size.back();
        CHECK(y.dtype() == t);
        CHECK(y.shape() == Shape{k.input[0], k.input[1], oh, ow});
        require_close(rt, y, upsample_reference(values(rt, x), k.input, oh, ow, sh, sw, linear, align_corners), 1e-5,
                      1e-5);
      }
}

TEST_CASE("upsample gradients match finite differences", "[nn][upsample][grad]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {2, 2, 3, 4}, DType::f64, -1.0, 1.0, 81);
  for (const Ints& size : {Ints{6, 8}, Ints{5, 3}, Ints{2, 9}}) {
    INFO("size " << size[0] << "x" << size[1]);
    gradcheck(rt, "upsample_nearest2d", {x}, {{"size", size}});
    gradcheck(rt, "upsample_bilinear2d", {x}, {{"size", size}});
    gradcheck(rt, "upsample_bilinear2d", {x}, {{"size", size}, {"align_corners", true}});
  }
  gradcheck(rt, "upsample_nearest2d", {x}, {{"scale_factor", Reals{2.5}}});
  gradcheck(rt, "upsample_bilinear2d", {x}, {{"scale_factor", Reals{1.7, 0.6}}});
}

TEST_CASE("upsample rejects sizes, scales and shapes it cannot take", "[nn][upsample][errors]") {
  Runtime rt;
  const Tensor x = rt.full({1, 2, 3, 3}, 1.0);
  require_error([&] { rt.call1("upsample_nearest2d", {x}); }, Status::invalid_argument,
                {"op 'upsample_nearest2d'", "either size or scale_factor should be defined"});
  require_error(
      [&] {
        rt.call1("upsample_bilinear2d", {x}, {{"size", Ints{4}}, {"scale_factor", Reals{2.0}}});
      },
      Status::invalid_argument, {"op 'upsample_bilinear2d'", "only one of size or scale_factor"});
  require_error(
      [&] {
        rt.call1("upsample_nearest2d", {x}, {{"size", Ints{2, 2, 2}}});
      },
      Status::invalid_argument, {"op 'upsample_nearest2d'", "1 or 2 values", "got 3"});
  require_error(
      [&] {
        rt.call1("upsample_nearest2d", {x}, {{"size", Ints{0, 2}}});
      },
      Status::invalid_argument, {"op 'upsample_nearest2d'", "size must be positive, got 0"});
  require_error(
      [&] {
        rt.call1("upsample_nearest2d", {x}, {{"scale_factor", Reals{-2.0}}});
      },
      Status::invalid_argument, {"op 'upsample_nearest2d'", "scale_factor must be positive", "-2"});
  require_error(
      [&] {
        rt.call1("upsample_bilinear2d", {x}, {{"scale_factor", Reals{0.2}}});
      },
      Status::shape_mismatch, {"op 'upsample_bilinear2d'", "sizes should be greater than 0", "output (H: 0, W: 0)"});
  require_error(
      [&] {
        rt.call1("upsample_nearest2d", {rt.full({2, 3, 4}, 1.0)}, {{"size", Ints{4}}});
      },
      Status::shape_mismatch, {"op 'upsample_nearest2d'", "[N, C, H, W]", "[2, 3, 4]"});
  require_error(
      [&] {
        rt.call1("upsample_nearest2d", {rt.full({1, 1, 2, 2}, 1.0, DType::i32)}, {{"size", Ints{4}}});
      },
      Status::dtype_mismatch, {"op 'upsample_nearest2d'", "floating point", "i32"});
  const Tensor g = rt.full({1, 2, 5, 5}, 1.0);
  require_error(
      [&] {
        rt.call1("upsample_nearest2d_backward", {g}, {{"size", Ints{4}}, {"input_shape", Ints{1, 2, 3, 3}}});
      },
      Status::shape_mismatch,
      {"op 'upsample_nearest2d_backward'", "grad_output has shape [1, 2, 5, 5]", "[1, 2, 4, 4]"});
}

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Ints = std::vector<int64_t>;

// A 2-d pooling window as PyTorch defines it, for the references below.
struct Window {
  int64_t k = 2, s = 2, p = 0, d = 1;
  bool ceil = false;

  int64_t out(int64_t in) const {
    const int64_t span = in + 2 * p - d * (k - 1) - 1;
    int64_t o = (span + (ceil ? s - 1 : 0)) / s + 1;
    if (ceil && (o - 1) * s >= in + p) --o;
    return o;
  }
};

enum class Mode { max, avg_include_pad, avg_exclude_pad };

// Plain loops over doubles: each output is the max or mean of its window.
std::vector<double> pool_reference(const std::vector<double>& x, const Shape& s, const Window& win, Mode mode) {
  const int64_t planes = s[0] * s[1], h = s[2], w = s[3], oh = win.out(h), ow = win.out(w);
  std::vector<double> out;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t inside = 0;
        for (int64_t a = 0; a < win.k; ++a)
          for (int64_t b = 0; b < win.k; ++b) {
            const int64_t y = i * win.s - win.p + a * win.d, xx = j * win.s - win.p + b * win.d;
            if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
            const double v = x[size_t((p * h + y) * w + xx)];
            best = std::max(best, v);
            sum += v;
            ++inside;
          }
        // PyTorch counts the padding a window covers, not what ceil_mode adds past it.
        const int64_t rows = std::min(i * win.s - win.p + win.k, h + win.p) - (i * win.s - win.p);
        const int64_t cols = std::min(j * win.s - win.p + win.k, w + win.p) - (j * win.s - win.p);
        if (mode == Mode::max) out.push_back(best);
        else out.push_back(sum / double(mode == Mode::avg_include_pad ? rows * cols : inside));
      }
  return out;
}

std::vector<double> adaptive_reference(const std::vector<double>& x, const Shape& s, int64_t oh, int64_t ow) {
  const int64_t planes = s[0] * s[1], h = s[2], w = s[3];
  std::vector<double> out;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const auto h0 = int64_t(std::floor(double(i * h) / double(oh))), h1 = int64_t(std::ceil(double((i + 1) * h) / double(oh)));
        const auto w0 = int64_t(std::floor(double(j * w) / double(ow))), w1 = int64_t(std::ceil(double((j + 1) * w) / double(ow)));
        double sum = 0;
        for (int64_t y = h0; y < h1; ++y)
          for (int64_t xx = w0; xx < w1; ++xx) sum += x[size_t((p * h + y) * w + xx)];
        out.push_back(sum / double((h1 - h0) * (w1 - w0)));
      }
  return out;
}

Tensor run_pool(Runtime& rt, const Tensor& x, const Window& win, Mode mode) {
  if (mode == Mode::max)
    return rt.call1("max_pool2d", {x},
                    {{"kernel_size", Ints{win.k}}, {"stride", Ints{win.s}}, {"padding", Ints{win.p}},
                     {"dilation", Ints{win.d}}, {"ceil_mode", win.ceil}});
  return rt.call1("avg_pool2d", {x},
                  {{"kernel_size", Ints{win.k}}, {"stride", Ints{win.s}}, {"padding", Ints{win.p}},
                   {"ceil_mode", win.ceil}, {"count_include_pad", mode == Mode::avg_include_pad}});
}

const std::vector<Window> kWindows = {
    {2, 2, 0, 1, false},  // plain 2x2
    {3, 2, 1, 1, true},   // padded, ceil mode: the last window reaches past the padding
    {3, 1, 1, 1, false},  // overlapping windows
    {2, 3, 1, 1, true},   // stride over the window
    {3, 2, 0, 2, false},  // dilated (max only)
};

}  // namespace

TEST_CASE("pooling forward matches a reference in f32 and f64", "[nn][pool]") {
  Runtime rt;
  const Shape shape{2, 3, 7, 6};
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor x = random_tensor(rt, shape, t);
    const std::vector<double> xv = values(rt, x);
    for (const Window& win : kWindows) {
      for (Mode mode : {Mode::max, Mode::avg_include_pad, Mode::avg_exclude_pad}) {
        if (win.d != 1 && mode != Mode::max) continue;
        INFO("dtype " << dtype_name(t) << " k" << win.k << " s" << win.s << " p" << win.p << " d" << win.d
                      << " ceil " << win.ceil << " mode " << int(mode));
        const Tensor y = run_pool(rt, x, win, mode);
        CHECK(y.shape() == Shape{2, 3, win.out(7), win.out(6)});
        CHECK(y.dtype() == t);
        require_close(rt, y, pool_reference(xv, shape, win, mode), 1e-6, 1e-5);
      }
    }
    const Tensor a = rt.call1("adaptive_avg_pool2d", {x}, {{"output_size", Ints{3, 4}}});
    CHECK(a.shape() == Shape{2, 3, 3, 4});
    require_close(rt, a, adaptive_reference(xv, shape, 3, 4), 1e-6, 1e-5);
    const Tensor g = rt.call1("adaptive_avg_pool2d", {x}, {{"output_size", Ints{1}}});
    require_close(rt, g, adaptive_reference(xv, shape, 1, 1), 1e-6, 1e-5);
  }
}

TEST_CASE("pooling reads a transposed input", "[nn][pool]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor base = random_tensor(rt, {1, 2, 5, 6}, t);
    const Tensor x = rt.call1("transpose", {base}, {{"dim0", 2}, {"dim1", 3}});  // [1, 2, 6, 5], strided
    REQUIRE_FALSE(x.is_contiguous());
    const std::vector<double> xv = values(rt, x);
    const Window win{3, 2, 1, 1, false};
    for (Mode mode : {Mode::max, Mode::avg_include_pad})
      require_close(rt, run_pool(rt, x, win, mode), pool_reference(xv, x.shape(), win, mode), 1e-6, 1e-5);
    require_close(rt, rt.call1("adaptive_avg_pool2d", {x}, {{"output_size", Ints{4, 3}}}),
                  adaptive_reference(xv, x.shape(), 4, 3), 1e-6, 1e-5);
  }
}

TEST_CASE("pooling gradients match finite differences", "[nn][pool][grad]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {2, 2, 5, 6});
  for (const Window& win : kWindows) {
    INFO("k" << win.k << " s" << win.s << " p" << win.p << " d" << win.d << " ceil " << win.ceil);
    gradcheck(rt, "max_pool2d", {x},
              {{"kernel_size", Ints{win.k}}, {"stride", Ints{win.s}}, {"padding", Ints{win.p}},
               {"dilation", Ints{win.d}}, {"ceil_mode", win.ceil}});
    if (win.d != 1) continue;
    for (bool include_pad : {true, false})
      gradcheck(rt, "avg_pool2d", {x},
                {{"kernel_size", Ints{win.k}}, {"stride", Ints{win.s}}, {"padding", Ints{win.p}},
                 {"ceil_mode", win.ceil}, {"count_include_pad", include_pad}});
  }
  gradcheck(rt, "avg_pool2d", {x}, {{"kernel_size", Ints{3, 2}}, {"stride", Ints{1, 2}}, {"padding", Ints{1, 0}}});
  gradcheck(rt, "adaptive_avg_pool2d", {x}, {{"output_size", Ints{3, 4}}});
  gradcheck(rt, "adaptive_avg_pool2d", {x}, {{"output_size", Ints{2}}});
}

TEST_CASE("max_pool2d sends the gradient to the maximum only", "[nn][pool][grad]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {1, 1, 2, 2}, {1, 4, 3, 2}).detach();
  x.set_requires_grad(true);
  const Tensor y = rt.call1("max_pool2d", {x}, {{"kernel_size", Ints{2}}});
  require_close(rt, y, {4});
  rt.backward(y);
  require_close(rt, x.grad(), {0, 1, 0, 0});
}

TEST_CASE("max_pool2d_backward picks the first of tied maxima and a NaN, with and without padding",
          "[nn][pool][grad]") {
  Runtime rt;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Two 2x2 windows side by side: ties (5 twice) in the first, a NaN in the second.
  const Tensor x = make_tensor(rt, {1, 1, 2, 4}, {1, 5, 7, nan, 5, 2, 9, 3});
  const Tensor g = make_tensor(rt, {1, 1, 1, 2}, {10, 20});
  // Windows inside the plane (no bounds checks), then the same windows
  // reached through padding (the checked path): the same choice.
  require_close(rt, rt.call1("max_pool2d_backward", {g, x}, {{"kernel_size", Ints{2}}}),
                {0, 10, 0, 20, 0, 0, 0, 0});
  const Tensor padded_g = make_tensor(rt, {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  require_close(rt, rt.call1("max_pool2d_backward", {padded_g, x}, {{"kernel_size", Ints{2}}, {"padding", Ints{1}}}),
                {1, 0, 2, 3, 4, 0, 5, 6});
}

TEST_CASE("f32 and bf16 max_pool2d_backward over 2x2 windows (in vectors) choose as the f64 path does, ties and NaNs "
          "included",
          "[nn][pool][grad]") {
  Runtime rt;
  // Values from {0, 1, 2} and a NaN now and then: many ties; rows of fewer
  // than four windows (one by one), and widths with and without a remainder
  // past the last group of four windows (a last group overlapping the one
  // before); an odd height and an odd width leave a row and a column in no
  // window. Every value is exact in bf16; the gradients are rounded to the
  // narrow type first, so the f64 path sees the same numbers and the results
  // must match exactly.
  for (DType narrow : {DType::f32, DType::bf16}) {
    const auto to = [&](const Tensor& t, DType d) { return rt.call1("cast", {t}, {{"dtype", d}}); };
    for (int64_t width : {6, 14, 16, 22, 23}) {
      INFO(dtype_name(narrow) << ", width " << width);
      const Shape shape{2, 3, 7, width};
      std::vector<double> x(size_t(shape.numel()));
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = i % 23 == 5 ? std::numeric_limits<double>::quiet_NaN() : double((i * 7 + i / 5) % 3);
      const Tensor x64 = make_tensor(rt, shape, x);
      const Tensor g = to(random_tensor(rt, {2, 3, 3, width / 2}, DType::f64, 1.0, 2.0, 61), narrow);
      const Tensor want = rt.call1("max_pool2d_backward", {to(g, DType::f64), x64}, {{"kernel_size", Ints{2}}});
      const Tensor got = rt.call1("max_pool2d_backward", {g, to(x64, narrow)}, {{"kernel_size", Ints{2}}});
      CHECK(got.dtype() == narrow);
      require_close(rt, got, values(rt, want), 0.0, 0.0);
    }
  }
}

TEST_CASE("f32 and bf16 max_pool2d over 2x2 windows (in vectors) choose as the f64 path does, signed zeros and "
          "NaNs included",
          "[nn][pool]") {
  Runtime rt;
  // Values from {-0, +0, 1} and a NaN now and then: ties between zeros of
  // either sign, where the first in row-major order must win; rows of fewer
  // than four windows, widths with and without a remainder past the last
  // group of four windows, an odd height and width that leave a row and a
  // column out.
  for (DType narrow : {DType::f32, DType::bf16}) {
    for (int64_t width : {6, 14, 16, 22, 23}) {
      INFO(dtype_name(narrow) << ", width " << width);
      const Shape shape{2, 3, 7, width};
      std::vector<double> x(size_t(shape.numel()));
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t pick = (i * 7 + i / 5) % 3;
        x[i] = i % 23 == 5 ? std::numeric_limits<double>::quiet_NaN() : pick == 0 ? -0.0 : pick == 1 ? 0.0 : 1.0;
      }
      const Tensor x64 = make_tensor(rt, shape, x);
      const std::vector<double> want = values(rt, rt.call1("max_pool2d", {x64}, {{"kernel_size", Ints{2}}}));
      const Tensor got = rt.call1("max_pool2d", {rt.call1("cast", {x64}, {{"dtype", narrow}})}, {{"kernel_size", Ints{2}}});
      CHECK(got.dtype() == narrow);
      const std::vector<double> got_values = values(rt, got);
      REQUIRE(got_values.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        INFO("output " << i << ": " << got_values[i] << " against " << want[i]);
        if (std::isnan(want[i])) {
          CHECK(std::isnan(got_values[i]));
        } else {
          CHECK(got_values[i] == want[i]);
          CHECK(std::signbit(got_values[i]) == std::signbit(want[i]));
        }
      }
    }
  }
}

TEST_CASE("pooling rejects windows, shapes and dtypes it cannot take", "[nn][pool][errors]") {
  Runtime rt;
  const Tensor x = rt.full({1, 1, 4, 4}, 1.0);
  require_error([&] { rt.call1("max_pool2d", {x}, {{"kernel_size", Ints{5}}}); }, Status::shape_mismatch,
              {"op 'max_pool2d'", "5x5 window", "does not fit a 4x4 input", "[1, 1, 4, 4]"});
  require_error([&] { rt.call1("avg_pool2d", {x}, {{"kernel_size", Ints{2}}, {"padding", Ints{2}}}); },
              Status::invalid_argument, {"op 'avg_pool2d'", "padding 2x2", "half the 2x2 window"});
  require_error([&] { rt.call1("max_pool2d", {x}, {{"kernel_size", Ints{2}}, {"stride", Ints{0}}}); },
              Status::invalid_argument, {"op 'max_pool2d'", "must be positive"});
  require_error([&] { rt.call1("avg_pool2d", {x}, {{"kernel_size", Ints{1, 2, 3}}}); }, Status::invalid_argument,
              {"op 'avg_pool2d'", "kernel_size takes 1 or 2 values", "got 3"});
  require_error([&] { rt.call1("max_pool2d", {rt.full({4, 4, 4}, 1.0)}, {{"kernel_size", Ints{2}}}); },
              Status::shape_mismatch, {"op 'max_pool2d'", "[N, C, H, W]", "[4, 4, 4]"});
  require_error([&] { rt.call1("avg_pool2d", {rt.full({1, 1, 4, 4}, 1.0, DType::i32)}, {{"kernel_size", Ints{2}}}); },
              Status::dtype_mismatch, {"op 'avg_pool2d'", "floating point", "i32"});
  require_error([&] { rt.call1("adaptive_avg_pool2d", {x}, {{"output_size", Ints{0, 2}}}); }, Status::invalid_argument,
              {"op 'adaptive_avg_pool2d'", "output_size must be positive", "0x2"});
  require_error(
      [&] {
        rt.call1("max_pool2d_backward", {rt.full({1, 1, 3, 3}, 1.0), x}, {{"kernel_size", Ints{2}}});
      },
      Status::shape_mismatch, {"op 'max_pool2d_backward'", "[1, 1, 3, 3]", "[1, 1, 2, 2]"});
}

TEST_CASE("f32 pooling reuses oneDNN primitives cached by shape", "[nn][pool]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {1, 2, 6, 6}, DType::f32);
  const size_t before = rt.dnnl().cache_size();
  run_pool(rt, x, {3, 2, 1, 1, false}, Mode::max);
  run_pool(rt, x, {3, 2, 1, 1, false}, Mode::avg_include_pad);
  CHECK(rt.dnnl().cache_size() == before + 2);
  run_pool(rt, random_tensor(rt, {1, 2, 6, 6}, DType::f32, -1.0, 1.0, 9), {3, 2, 1, 1, false}, Mode::max);
  CHECK(rt.dnnl().cache_size() == before + 2);
}

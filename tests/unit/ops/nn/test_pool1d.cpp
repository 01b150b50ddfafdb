// max_pool1d and avg_pool1d against a plain double reference, their
// gradients against finite differences, and their argument errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Ints = std::vector<int64_t>;

struct Window1d {
  int64_t k = 2, s = 2, p = 0, d = 1;
  bool ceil = false, include_pad = true;

  int64_t out(int64_t in) const {
    const int64_t span = in + 2 * p - d * (k - 1) - 1;
    int64_t o = (span + (ceil ? s - 1 : 0)) / s + 1;
    if (ceil && (o - 1) * s >= in + p) --o;
    return o;
  }
};

// Each output the max or the mean of its window over [N, C, L].
std::vector<double> pool1d_reference(const std::vector<double>& x, const Shape& s, const Window1d& w, bool max) {
  const int64_t length = s[2];
  std::vector<double> y;
  for (int64_t r = 0; r < s[0] * s[1]; ++r)
    for (int64_t o = 0; o < w.out(length); ++o) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t inside = 0;
      for (int64_t t = 0; t < w.k; ++t) {
        const int64_t i = o * w.s - w.p + t * w.d;
        if (i < 0 || i >= length) continue;
        best = std::max(best, x[size_t(r * length + i)]);
        sum += x[size_t(r * length + i)];
        ++inside;
      }
      const int64_t covered = std::min(o * w.s - w.p + w.k, length + w.p) - (o * w.s - w.p);
      y.push_back(max ? best : sum / double(w.include_pad ? covered : inside));
    }
  return y;
}

Tensor max_pool1d(Runtime& rt, const Tensor& x, const Window1d& w) {
  return rt.call1("max_pool1d", {x}, {{"kernel_size", Ints{w.k}}, {"stride", Ints{w.s}}, {"padding", Ints{w.p}},
                                      {"dilation", Ints{w.d}}, {"ceil_mode", w.ceil}});
}

Tensor avg_pool1d(Runtime& rt, const Tensor& x, const Window1d& w) {
  return rt.call1("avg_pool1d", {x}, {{"kernel_size", Ints{w.k}}, {"stride", Ints{w.s}}, {"padding", Ints{w.p}},
                                      {"ceil_mode", w.ceil}, {"count_include_pad", w.include_pad}});
}

const std::vector<Window1d> kWindows = {
    {2, 2, 0, 1, false, true}, {3, 1, 1, 1, false, true}, {3, 2, 1, 1, true, false},
    {2, 3, 1, 2, false, true}, {4, 3, 2, 1, true, true},
};

}  // namespace

TEST_CASE("1-d pooling matches a reference", "[nn][pool][pool1d]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64})
    for (const Shape& shape : {Shape{2, 3, 9}, Shape{1, 2, 8}, Shape{3, 1, 12}})
      for (const Window1d& w : kWindows) {
        INFO(dtype_name(t) << " " << to_string(shape) << " k " << w.k << " s " << w.s << " p " << w.p << " d " << w.d
                           << " ceil " << w.ceil);
        const Tensor x = random_tensor(rt, shape, t, -2.0, 2.0, 91);
        const Tensor y = max_pool1d(rt, x, w);
        CHECK(y.shape() == Shape{shape[0], shape[1], w.out(shape[2])});
        CHECK(y.dtype() == t);
        require_close(rt, y, pool1d_reference(values(rt, x), shape, w, true), 1e-6, 1e-6);
        if (w.d == 1) require_close(rt, avg_pool1d(rt, x, w), pool1d_reference(values(rt, x), shape, w, false), 1e-6,
                                    1e-5);
      }
}

TEST_CASE("1-d pooling defaults its stride to the window and reads strided inputs", "[nn][pool][pool1d]") {
  Runtime rt;
  const Tensor base = random_tensor(rt, {2, 10, 3}, DType::f64, -1.0, 1.0, 92);
  const Tensor x = rt.call1("transpose", {base}, {{"dim0", 1}, {"dim1", 2}});  // [2, 3, 10]
  REQUIRE_FALSE(x.is_contiguous());
  const Window1d w{3, 3, 0, 1, false, true};
  require_close(rt, rt.call1("max_pool1d", {x}, {{"kernel_size", Ints{3}}}),
                pool1d_reference(values(rt, x), x.shape(), w, true));
  require_close(rt, rt.call1("avg_pool1d", {x}, {{"kernel_size", Ints{3}}}),
                pool1d_reference(values(rt, x), x.shape(), w, false));
}

TEST_CASE("1-d pooling gradients match finite differences", "[nn][pool][pool1d][grad]") {
  Runtime rt;
  // Distinct values a step apart, so that no window's maximum is a near tie.
  std::vector<double> v;
  for (int i = 0; i < 2 * 3 * 9; ++i) v.push_back(double((i * 37) % 54) * 0.1);
  const Tensor x = make_tensor(rt, {2, 3, 9}, v);
  for (const Window1d& w : kWindows) {
    INFO("k " << w.k << " s " << w.s << " p " << w.p << " d " << w.d << " ceil " << w.ceil);
    gradcheck_fn(rt, [&](const std::vector<Tensor>& in) { return max_pool1d(rt, in[0], w); }, {x});
    gradcheck_fn(rt, [&](const std::vector<Tensor>& in) { return avg_pool1d(rt, in[0], w); }, {x});
  }
}

TEST_CASE("1-d pooling rejects windows and shapes it cannot take", "[nn][pool][pool1d][errors]") {
  Runtime rt;
  const Tensor x = rt.full({2, 3, 6}, 1.0);
  require_error([&] { rt.call1("max_pool1d", {rt.full({2, 3, 4, 4}, 1.0)}, {{"kernel_size", Ints{2}}}); },
                Status::shape_mismatch, {"op 'max_pool1d'", "[N, C, L]", "[2, 3, 4, 4]"});
  require_error([&] { rt.call1("avg_pool1d", {x}, {{"kernel_size", Ints{2, 2}}}); }, Status::invalid_argument,
                {"op 'avg_pool1d'", "kernel_size takes 1 value, got 2"});
  require_error([&] { rt.call1("max_pool1d", {x}, {{"kernel_size", Ints{2}}, {"stride", Ints{0}}}); },
                Status::invalid_argument, {"op 'max_pool1d'", "must be positive", "2, 0 and 1"});
  require_error([&] { rt.call1("avg_pool1d", {x}, {{"kernel_size", Ints{2}}, {"padding", Ints{2}}}); },
                Status::invalid_argument, {"op 'avg_pool1d'", "padding 2", "half the window of 2"});
  require_error([&] { rt.call1("max_pool1d", {x}, {{"kernel_size", Ints{4}}, {"dilation", Ints{2}}}); },
                Status::shape_mismatch, {"op 'max_pool1d'", "window of 7", "[2, 3, 6]"});
  require_error([&] { rt.call1("max_pool1d", {rt.full({1, 1, 4}, 1.0, DType::i64)}, {{"kernel_size", Ints{2}}}); },
                Status::dtype_mismatch, {"op 'max_pool1d'", "floating point", "i64"});
}

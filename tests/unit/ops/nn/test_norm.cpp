#include <catch2/catch.hpp>
#include <cmath>

#include "kiln/error.hpp"
#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Ints = std::vector<int64_t>;

// Plain loops over doubles. batch norm: x seen as [N, C, inner].
struct BatchNormReference {
  std::vector<double> output, running_mean, running_var;
};

BatchNormReference batch_norm_reference(const std::vector<double>& x, const Shape& s, const std::vector<double>& w,
                                        const std::vector<double>& b, std::vector<double> rm, std::vector<double> rv,
                                        bool training, double momentum, double eps) {
  const int64_t n = s[0], c = s[1], inner = s.numel() / (n * c), count = n * inner;
  auto at = [&](int64_t i, int64_t ch, int64_t k) { return size_t((i * c + ch) * inner + k); };
  BatchNormReference r;
  r.output.resize(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) mean += x[at(i, ch, k)] / double(count);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) var += std::pow(x[at(i, ch, k)] - mean, 2) / double(count);
    if (training) {
      rm[size_t(ch)] = (1 - momentum) * rm[size_t(ch)] + momentum * mean;
      rv[size_t(ch)] = (1 - momentum) * rv[size_t(ch)] + momentum * var * double(count) / double(count - 1);
    } else {
      mean = rm[size_t(ch)];
      var = rv[size_t(ch)];
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k)
        r.output[at(i, ch, k)] = (x[at(i, ch, k)] - mean) / std::sqrt(var + eps) * w[size_t(ch)] + b[size_t(ch)];
  }
  r.running_mean = rm;
  r.running_var = rv;
  return r;
}

std::vector<double> layer_norm_reference(const std::vector<double>& x, int64_t size, const std::vector<double>& w,
                                         const std::vector<double>& b, double eps) {
  std::vector<double> y(x.size());
  for (size_t row = 0; row < x.size() / size_t(size); ++row) {
    double mean = 0, var = 0;
    for (size_t k = 0; k < size_t(size); ++k) mean += x[row * size_t(size) + k] / double(size);
    for (size_t k = 0; k < size_t(size); ++k) var += std::pow(x[row * size_t(size) + k] - mean, 2) / double(size);
    for (size_t k = 0; k < size_t(size); ++k)
      y[row * size_t(size) + k] = (x[row * size_t(size) + k] - mean) / std::sqrt(var + eps) * w[k] + b[k];
  }
  return y;
}

}  // namespace

TEST_CASE("batch_norm matches a reference and updates the running statistics", "[nn][norm]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    for (const Shape& shape : {Shape{5, 3}, Shape{2, 3, 4, 5}}) {
      for (bool training : {true, false}) {
        INFO("dtype " << dtype_name(t) << " shape " << to_string(shape) << " training " << training);
        const Tensor x = random_tensor(rt, shape, t, -2.0, 3.0, 7);
        const Tensor w = random_tensor(rt, {3}, t, 0.5, 1.5, 2), b = random_tensor(rt, {3}, t, -1.0, 1.0, 3);
        const Tensor rm = random_tensor(rt, {3}, t, -0.5, 0.5, 4), rv = random_tensor(rt, {3}, t, 0.5, 2.0, 5);
        const BatchNormReference ref = batch_norm_reference(values(rt, x), shape, values(rt, w), values(rt, b),
                                                            values(rt, rm), values(rt, rv), training, 0.2, 1e-3);
        const Tensor y = rt.call1("batch_norm", {x, w, b, rm, rv},
                                  {{"training", training}, {"momentum", 0.2}, {"eps", 1e-3}});
        CHECK(y.dtype() == t);
        CHECK(y.shape() == shape);
        require_close(rt, y, ref.output, 1e-5, 1e-5);
        require_close(rt, rm, ref.running_mean, 1e-6, 1e-5);
        require_close(rt, rv, ref.running_var, 1e-6, 1e-5);
      }
      INFO("without weight, bias or running statistics");
      const Tensor x = random_tensor(rt, shape, t);
      const std::vector<double> ones(3, 1.0), zeros(3, 0.0);
      require_close(rt, rt.call1("batch_norm", {x}, {{"training", true}}),
                    batch_norm_reference(values(rt, x), shape, ones, zeros, zeros, ones, true, 0.1, 1e-5).output,
                    1e-5, 1e-5);
    }
  }
}

TEST_CASE("batch_norm gradients match finite differences", "[nn][norm][grad]") {
  Runtime rt;
  const GradcheckOptions skip_running{1e-6, 1e-5, 1e-3, {3, 4}};
  for (const Shape& shape : {Shape{4, 3}, Shape{2, 3, 2, 3}}) {
    const Tensor x = random_tensor(rt, shape, DType::f64, -1.0, 1.0, 11);
    const Tensor w = random_tensor(rt, {3}, DType::f64, 0.5, 1.5, 12);
    const Tensor b = random_tensor(rt, {3}, DType::f64, -1.0, 1.0, 13);
    const Tensor rm = random_tensor(rt, {3}, DType::f64, -0.5, 0.5, 14);
    const Tensor rv = random_tensor(rt, {3}, DType::f64, 0.5, 2.0, 15);
    for (bool training : {true, false}) {
      INFO("shape " << to_string(shape) << " training " << training);
      gradcheck(rt, "batch_norm", {x, w, b, rm, rv}, {{"training", training}}, skip_running);
    }
    gradcheck(rt, "batch_norm", {x}, {{"training", true}});
  }
}

TEST_CASE("batch_norm reads a transposed input", "[nn][norm]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor x = rt.call1("transpose", {random_tensor(rt, {3, 4}, t)}, {{"dim0", 0}, {"dim1", 1}});  // [4, 3]
    REQUIRE_FALSE(x.is_contiguous());
    const std::vector<double> ones(3, 1.0), zeros(3, 0.0);
    require_close(rt, rt.call1("batch_norm", {x}, {{"training", true}}),
                  batch_norm_reference(values(rt, x), x.shape(), ones, zeros, zeros, ones, true, 0.1, 1e-5).output,
                  1e-5, 1e-5);
  }
}

TEST_CASE("layer_norm matches a reference", "[nn][norm]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor x = random_tensor(rt, {2, 3, 4, 5}, t, -2.0, 3.0, 21);
    const Tensor w = random_tensor(rt, {4, 5}, t, 0.5, 1.5, 22), b = random_tensor(rt, {4, 5}, t, -1.0, 1.0, 23);
    const Tensor y = rt.call1("layer_norm", {x, w, b}, {{"normalized_shape", Ints{4, 5}}, {"eps", 1e-3}});
    CHECK(y.dtype() == t);
    require_close(rt, y, layer_norm_reference(values(rt, x), 20, values(rt, w), values(rt, b), 1e-3), 1e-5, 1e-5);
    const Tensor plain = rt.call1("layer_norm", {x}, {{"normalized_shape", Ints{5}}});
    require_close(rt, plain,
                  layer_norm_reference(values(rt, x), 5, std::vector<double>(5, 1.0), std::vector<double>(5, 0.0),
                                       1e-5),
                  1e-5, 1e-5);
    const Tensor xt = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 3}});  // [5, 3, 4, 2], strided
    REQUIRE_FALSE(xt.is_contiguous());
    require_close(rt, rt.call1("layer_norm", {xt}, {{"normalized_shape", Ints{4, 2}}}),
                  layer_norm_reference(values(rt, xt), 8, std::vector<double>(8, 1.0), std::vector<double>(8, 0.0),
                                       1e-5),
                  1e-5, 1e-5);
  }
}

TEST_CASE("layer_norm gradients match finite differences", "[nn][norm][grad]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {3, 2, 5}, DType::f64, -1.0, 1.0, 31);
  const Tensor w = random_tensor(rt, {2, 5}, DType::f64, 0.5, 1.5, 32);
  const Tensor b = random_tensor(rt, {2, 5}, DType::f64, -1.0, 1.0, 33);
  gradcheck(rt, "layer_norm", {x, w, b}, {{"normalized_shape", Ints{2, 5}}});
  gradcheck(rt, "layer_norm", {x}, {{"normalized_shape", Ints{5}}});
  gradcheck(rt, "layer_norm", {x, random_tensor(rt, {5}, DType::f64, 0.5, 1.5, 34)}, {{"normalized_shape", Ints{5}}});
}

TEST_CASE("layer_norm's backward over many rows: f32 as f64, and the same for any thread count", "[nn][norm][grad]") {
  // 100 rows: blocks of 32 rows, the last one partial, whose weight and bias
  // terms are added in block order.
  std::vector<double> first_threads;
  for (int threads : {1, 2, 3}) {
    RuntimeOptions options;
    options.num_threads = threads;
    Runtime rt(options);
    const Tensor g = random_tensor(rt, {4, 25, 40}, DType::f64, -1.0, 1.0, 41);
    const Tensor x = random_tensor(rt, {4, 25, 40}, DType::f64, -2.0, 3.0, 42);
    const Tensor w = random_tensor(rt, {40}, DType::f64, 0.5, 1.5, 43);
    const auto f32 = [&](const Tensor& t) { return rt.call1("cast", {t}, {{"dtype", DType::f32}}); };
    const std::vector<Tensor> want = rt.call(rt.op("layer_norm_backward"), std::vector<Tensor>{g, x, w},
                                             rt.op("layer_norm_backward").make_attrs({{"normalized_shape", Ints{40}}}));
    const std::vector<Tensor> got = rt.call(rt.op("layer_norm_backward"), std::vector<Tensor>{f32(g), f32(x), f32(w)},
                                            rt.op("layer_norm_backward").make_attrs({{"normalized_shape", Ints{40}}}));
    for (size_t i = 0; i < 3; ++i) require_close(rt, got[i], values(rt, want[i]), 1e-4, 1e-4);
    std::vector<double> all;
    for (const Tensor& t : got)
      for (double v : values(rt, t)) all.push_back(v);
    if (threads == 1) first_threads = all;
    CHECK(all == first_threads);
  }
}

TEST_CASE("batch_norm's backward in f32 matches f64, training and evaluating, with and without weight",
          "[nn][norm][grad]") {
  Runtime rt;
  const Tensor g = random_tensor(rt, {6, 3, 4, 5}, DType::f64, -1.0, 1.0, 51);
  const Tensor x = random_tensor(rt, {6, 3, 4, 5}, DType::f64, -2.0, 3.0, 52);
  const Tensor w = random_tensor(rt, {3}, DType::f64, 0.5, 1.5, 53);
  const Tensor mean = random_tensor(rt, {3}, DType::f64, -0.5, 0.5, 54);
  const Tensor var = random_tensor(rt, {3}, DType::f64, 0.5, 2.0, 55);
  const auto f32 = [&](const Tensor& t) { return t ? rt.call1("cast", {t}, {{"dtype", DType::f32}}) : Tensor(); };
  const OpDef& op = rt.op("batch_norm_backward");
  for (bool training : {true, false})
    for (const Tensor& weight : {w, Tensor()}) {
      const Tensor running_mean = training ? Tensor() : mean, running_var = training ? Tensor() : var;
      const Attrs attrs = op.make_attrs({{"training", training}});
      const std::vector<Tensor> want = rt.call(op, std::vector<Tensor>{g, x, weight, running_mean, running_var}, attrs);
      const std::vector<Tensor> got = rt.call(
          op, std::vector<Tensor>{f32(g), f32(x), f32(weight), f32(running_mean), f32(running_var)}, attrs);
      INFO("training " << training << ", weight " << bool(weight));
      for (size_t i = 0; i < 3; ++i) require_close(rt, got[i], values(rt, want[i]), 1e-4, 1e-4);
    }
}

TEST_CASE("batch_norm's backward in f32 stays close to f64 on planes larger than one partial sum, far from zero",
          "[nn][norm][grad]") {
  Runtime rt;
  const auto cast = [&](const Tensor& t, DType d) { return rt.call1("cast", {t}, {{"dtype", d}}); };
  // 40 x 40 values per plane, centred on 100 with a spread of 1: the f64
  // reference takes the same (f32-rounded) numbers.
  const Tensor g = cast(random_tensor(rt, {3, 2, 40, 40}, DType::f64, -1.0, 1.0, 61), DType::f32);
  const Tensor x = cast(random_tensor(rt, {3, 2, 40, 40}, DType::f64, 99.0, 101.0, 62), DType::f32);
  const Tensor w = cast(random_tensor(rt, {2}, DType::f64, 0.5, 1.5, 63), DType::f32);
  const OpDef& op = rt.op("batch_norm_backward");
  const Attrs attrs = op.make_attrs({{"training", true}});
  const std::vector<Tensor> want =
      rt.call(op, std::vector<Tensor>{cast(g, DType::f64), cast(x, DType::f64), cast(w, DType::f64)}, attrs);
  const std::vector<Tensor> got = rt.call(op, std::vector<Tensor>{g, x, w}, attrs);
  require_close(rt, got[0], values(rt, want[0]), 1e-5, 1e-4);  // grad_input, values up to about 2.5
  require_close(rt, got[1], values(rt, want[1]), 1e-3, 1e-5);  // sums of 4800 products
  require_close(rt, got[2], values(rt, want[2]), 1e-3, 1e-5);
}

TEST_CASE("normalisation rejects wrong shapes, modes and dtypes", "[nn][norm][errors]") {
  Runtime rt;
  const Tensor x = rt.full({4, 3, 2, 2}, 1.0);
  require_error([&] { rt.call1("batch_norm", {x, rt.full({4}, 1.0)}, {{"training", true}}); }, Status::shape_mismatch,
              {"op 'batch_norm'", "weight has shape [4]", "[4, 3, 2, 2]", "3 channels", "expected [3]"});
  require_error([&] { rt.call1("batch_norm", {x}, {{"training", false}}); }, Status::invalid_argument,
              {"op 'batch_norm'", "needs running_mean and running_var"});
  require_error([&] { rt.call1("batch_norm", {x, Tensor(), Tensor(), rt.full({3}, 0.0)}, {{"training", true}}); },
              Status::invalid_argument, {"op 'batch_norm'", "given together"});
  require_error([&] { rt.call1("batch_norm", {rt.full({1, 3}, 1.0)}, {{"training", true}}); }, Status::shape_mismatch,
              {"op 'batch_norm'", "more than one value per channel", "[1, 3]"});
  require_error([&] { rt.call1("batch_norm", {rt.full({4}, 1.0)}, {{"training", true}}); }, Status::shape_mismatch,
              {"op 'batch_norm'", "[N, C]", "[4]"});
  require_error([&] { rt.call1("batch_norm", {x, rt.full({3}, 1.0, DType::f64)}, {{"training", true}}); },
              Status::dtype_mismatch, {"op 'batch_norm'", "f64", "f32"});
  const Tensor strided = rt.call1("slice", {rt.full({6}, 0.0)}, {{"dim", 0}, {"start", 0}, {"end", 6}, {"step", 2}});
  require_error([&] { rt.call1("batch_norm", {x, Tensor(), Tensor(), strided, rt.full({3}, 1.0)}, {{"training", true}}); },
              Status::invalid_argument, {"op 'batch_norm'", "running_mean", "contiguous"});
  require_error([&] { rt.call1("layer_norm", {x}, {{"normalized_shape", Ints{3}}}); }, Status::shape_mismatch,
              {"op 'layer_norm'", "[4, 3, 2, 2]", "does not end in normalized_shape [3]"});
  require_error([&] { rt.call1("layer_norm", {x, rt.full({2}, 1.0)}, {{"normalized_shape", Ints{2, 2}}}); },
              Status::shape_mismatch, {"op 'layer_norm'", "weight has shape [2]", "expected normalized_shape [2, 2]"});
  require_error([&] { rt.call1("layer_norm", {rt.full({2, 2}, 1.0, DType::i64)}, {{"normalized_shape", Ints{2}}}); },
              Status::dtype_mismatch, {"op 'layer_norm'", "floating point", "i64"});
}

TEST_CASE("f32 layer_norm reuses oneDNN primitives cached by shape, batch_norm needs none", "[nn][norm]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {4, 3, 2}, DType::f32);
  const size_t before = rt.dnnl().cache_size();
  for (int repeat = 0; repeat < 2; ++repeat) {
    rt.call1("batch_norm", {x}, {{"training", true}});
    rt.call1("layer_norm", {x}, {{"normalized_shape", Ints{2}}});
  }
  CHECK(rt.dnnl().cache_size() == before + 1);
}

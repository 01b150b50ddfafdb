#include <catch2/catch.hpp>

#include <cmath>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// torch.nn.functional.cross_entropy over [N, C, S] scores (S = 1 for [N, C]).
std::vector<double> cross_entropy_reference(const std::vector<double>& x, const std::vector<double>& target, int64_t n,
                                            int64_t c, int64_t s, int64_t ignore, double eps,
                                            const std::string& reduction) {
  std::vector<double> losses;
  double total = 0, valid = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < s; ++j) {
      const int64_t t = int64_t(target[size_t(i * s + j)]);
      if (t == ignore) {
        losses.push_back(0);
        continue;
      }
      auto at = [&](int64_t k) { return x[size_t((i * c + k) * s + j)]; };
      double m = -INFINITY, z = 0, smooth = 0;
      for (int64_t k = 0; k < c; ++k) m = std::max(m, at(k));
      for (int64_t k = 0; k < c; ++k) z += std::exp(at(k) - m);
      const double lse = m + std::log(z);
      for (int64_t k = 0; k < c; ++k) smooth += lse - at(k);
      const double loss = (1 - eps) * (lse - at(t)) + eps * smooth / double(c);
      losses.push_back(loss);
      total += loss;
      valid += 1;
    }
  if (reduction == "none") return losses;
  return {reduction == "sum" ? total : total / valid};
}

std::vector<double> pointwise_reference(const std::string& op, const std::vector<double>& x,
                                        const std::vector<double>& t, const std::string& reduction) {
  std::vector<double> losses;
  double total = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double l = op == "mse_loss" ? (x[i] - t[i]) * (x[i] - t[i])
                                      : -(t[i] * std::log(1 / (1 + std::exp(-x[i]))) +
                                          (1 - t[i]) * std::log(1 - 1 / (1 + std::exp(-x[i]))));
    losses.push_back(l);
    total += l;
  }
  if (reduction == "none") return losses;
  return {reduction == "sum" ? total : total / double(x.size())};
}

}  // namespace

TEST_CASE("cross_entropy matches torch semantics in f32 and f64", "[reduction][loss]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = random_tensor(rt, {4, 5}, dtype, -3.0, 3.0, 21);
    Tensor t = make_tensor(rt, {4}, {2, -100, 4, 0}, DType::i64);
    Tensor spatial = random_tensor(rt, {2, 3, 4}, dtype, -3.0, 3.0, 22);
    Tensor ts = make_tensor(rt, {2, 4}, {0, 1, 2, 7, 2, 2, 1, 0}, DType::i32);
    for (const char* reduction : {"mean", "sum", "none"}) {
      for (double eps : {0.0, 0.1}) {
        INFO(dtype_name(dtype) << " reduction " << reduction << " label_smoothing " << eps);
        Tensor y = rt.call1("cross_entropy", {x, t}, {{"reduction", reduction}, {"label_smoothing", eps}});
        require_close(rt, y, cross_entropy_reference(values(rt, x), values(rt, t), 4, 5, 1, -100, eps, reduction), 1e-6,
                      1e-5);
        Tensor ys = rt.call1("cross_entropy", {spatial, ts},
                             {{"reduction", reduction}, {"label_smoothing", eps}, {"ignore_index", 7}});
        require_close(rt, ys,
                      cross_entropy_reference(values(rt, spatial), values(rt, ts), 2, 3, 4, 7, eps, reduction), 1e-6,
                      1e-5);
      }
    }
    Tensor strided = rt.call1("transpose", {random_tensor(rt, {5, 4}, dtype)}, {{"dim0", 0}, {"dim1", 1}});
    require_close(rt, rt.call1("cross_entropy", {strided, t}),
                  cross_entropy_reference(values(rt, strided), values(rt, t), 4, 5, 1, -100, 0.0, "mean"), 1e-6, 1e-5);
  }
}

TEST_CASE("nll_loss picks the negative log probability of the target", "[reduction][loss]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor lp = make_tensor(rt, {3, 2}, {-0.1, -2.0, -1.5, -0.3, -0.7, -0.9}, dtype);
    Tensor t = make_tensor(rt, {3}, {1, 0, 5}, DType::i64);
    require_close(rt, rt.call1("nll_loss", {lp, t}, {{"ignore_index", 5}}), {(2.0 + 1.5) / 2});
    require_close(rt, rt.call1("nll_loss", {lp, t}, {{"ignore_index", 5}, {"reduction", "sum"}}), {3.5});
    require_close(rt, rt.call1("nll_loss", {lp, t}, {{"ignore_index", 5}, {"reduction", "none"}}), {2.0, 1.5, 0.0});
  }
}

TEST_CASE("mse_loss and bce_with_logits match a reference", "[reduction][loss]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = random_tensor(rt, {3, 4}, dtype, -4.0, 4.0, 31);
    Tensor t = random_tensor(rt, {3, 4}, dtype, 0.0, 1.0, 32);
    for (const char* op : {"mse_loss", "bce_with_logits"})
      for (const char* reduction : {"mean", "sum", "none"}) {
        INFO(dtype_name(dtype) << " " << op << " " << reduction);
        require_close(rt, rt.call1(op, {x, t}, {{"reduction", reduction}}),
                      pointwise_reference(op, values(rt, x), values(rt, t), reduction), 1e-6, 1e-5);
      }
  }
  // The stable form holds where the naive one overflows.
  Tensor big = make_tensor(rt, {2}, {800.0, -800.0});
  require_close(rt, rt.call1("bce_with_logits", {big, make_tensor(rt, {2}, {0.0, 1.0})}, {{"reduction", "none"}}),
                {800.0, 800.0});
}

TEST_CASE("loss gradients match finite differences", "[reduction][loss][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {4, 5}, DType::f64, -2.0, 2.0, 41);
  Tensor t = make_tensor(rt, {4}, {2, -100, 4, 0}, DType::i64);
  Tensor spatial = random_tensor(rt, {2, 3, 2}, DType::f64, -2.0, 2.0, 42);
  Tensor ts = make_tensor(rt, {2, 2}, {0, 2, 1, 1}, DType::i32);
  for (const char* reduction : {"mean", "sum", "none"}) {
    INFO(reduction);
    gradcheck(rt, "cross_entropy", {x, t}, {{"reduction", reduction}});
    gradcheck(rt, "cross_entropy", {x, t}, {{"reduction", reduction}, {"label_smoothing", 0.2}});
    gradcheck(rt, "cross_entropy", {spatial, ts}, {{"reduction", reduction}, {"label_smoothing", 0.1}});
    gradcheck(rt, "nll_loss", {x, t}, {{"reduction", reduction}});
    Tensor a = random_tensor(rt, {3, 2}, DType::f64, -2.0, 2.0, 43);
    Tensor b = random_tensor(rt, {3, 2}, DType::f64, 0.0, 1.0, 44);
    gradcheck(rt, "mse_loss", {a, b}, {{"reduction", reduction}});
    gradcheck(rt, "bce_with_logits", {a, b}, {{"reduction", reduction}});
  }
}

TEST_CASE("f32 cross_entropy and its backward match f64", "[reduction][loss][grad]") {
  Runtime rt;
  // Scores [N, C] (dense rows, through oneDNN) and [N, C, d...] with classes
  // at a stride, as a sequence model's [batch, classes, positions] (kiln's
  // softmax along the classes in chunks of 64 positions: 70 makes two, the
  // second partial); one ignored target in each.
  for (const Shape& shape : {Shape{15, 7}, Shape{3, 7, 5}, Shape{2, 7, 3, 5}, Shape{2, 7, 70}}) {
    const Tensor x = random_tensor(rt, shape, DType::f64, -4.0, 4.0, 45);
    Shape target_shape = shape;
    target_shape.erase(1);
    std::vector<double> classes(size_t(target_shape.numel()));
    for (size_t i = 0; i < classes.size(); ++i) classes[i] = double((i * 3) % 7);
    classes[4] = -100;
    const Tensor t = make_tensor(rt, target_shape, classes, DType::i64);
    const auto f32 = [&](const Tensor& v) { return rt.call1("cast", {v}, {{"dtype", DType::f32}}); };
    for (const char* reduction : {"mean", "sum", "none"})
      for (double eps : {0.0, 0.2}) {
        INFO(to_string(shape) << " " << reduction << " label_smoothing " << eps);
        const NamedAttrs attrs = {{"reduction", std::string(reduction)}, {"label_smoothing", eps}};
        const Tensor g = std::string(reduction) == "none" ? random_tensor(rt, target_shape, DType::f64, 0.5, 1.5, 46)
                                                           : make_tensor(rt, {}, {1.5});
        const Tensor loss = rt.call1("cross_entropy", {x, t}, attrs);
        require_close(rt, rt.call1("cross_entropy", {f32(x), t}, attrs), values(rt, loss), 1e-5, 1e-5);
        const Tensor want = rt.call1("cross_entropy_backward", {g, x, t}, attrs);
        const Tensor got = rt.call1("cross_entropy_backward", {f32(g), f32(x), t}, attrs);
        require_close(rt, got, values(rt, want), 1e-6, 1e-5);
      }
  }
}

TEST_CASE("f32 cross_entropy of no positions sums to 0, with an empty gradient", "[reduction][loss]") {
  Runtime rt;
  for (const Shape& shape : {Shape{0, 5}, Shape{2, 5, 0}}) {
    INFO(to_string(shape));
    Shape target_shape = shape;
    target_shape.erase(1);
    const Tensor x = rt.full(shape, 1.0, DType::f32);
    const Tensor t = rt.full(target_shape, 0.0, DType::i64);
    require_close(rt, rt.call1("cross_entropy", {x, t}, {{"reduction", "sum"}}), {0.0});
    const Tensor g = rt.call1("cross_entropy_backward", {rt.full({}, 1.0, DType::f32), x, t}, {{"reduction", "sum"}});
    CHECK(g.shape() == shape);
  }
}

TEST_CASE("losses reject bad targets, shapes and dtypes", "[reduction][loss][errors]") {
  Runtime rt;
  Tensor x = rt.full({3, 4}, 0.5);
  require_error([&] { rt.call1("cross_entropy", {x, make_tensor(rt, {3}, {0, 4, 1}, DType::i64)}); },
                Status::invalid_argument, {"op 'cross_entropy'", "target 4", "4 classes"});
  require_error([&] { rt.call1("nll_loss", {x, make_tensor(rt, {3}, {0, -1, 1}, DType::i32)}); },
                Status::invalid_argument, {"op 'nll_loss'", "target -1", "4 classes"});
  require_error([&] { rt.call1("cross_entropy", {x, make_tensor(rt, {2}, {0, 1}, DType::i64)}); },
                Status::shape_mismatch, {"op 'cross_entropy'", "[2]", "[3, 4]", "[3]"});
  require_error([&] { rt.call1("cross_entropy", {x, rt.full({3}, 0.0)}); }, Status::dtype_mismatch,
                {"op 'cross_entropy'", "f32", "i64"});
  require_error([&] { rt.call1("mse_loss", {x, rt.full({4, 3}, 0.0)}); }, Status::shape_mismatch,
                {"op 'mse_loss'", "[3, 4]", "[4, 3]"});
  require_error([&] { rt.call1("bce_with_logits", {x, x}, {{"reduction", "avg"}}); }, Status::invalid_argument,
                {"op 'bce_with_logits'", "'avg'", "mean, sum or none"});
}

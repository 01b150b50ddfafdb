#include <catch2/catch.hpp>

#include <cmath>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// Rows of `shape` along `dim`: calls fn(indices of the row's elements).
template <class Fn>
void for_each_row(const Shape& shape, int dim, Fn&& fn) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (int d = dim + 1; d < shape.rank(); ++d) inner *= shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<size_t> row;
      for (int64_t k = 0; k < shape[dim]; ++k) row.push_back(size_t((o * shape[dim] + k) * inner + i));
      fn(row);
    }
}

std::vector<double> softmax_reference(const Shape& shape, int dim, const std::vector<double>& x, bool log) {
  std::vector<double> y(x.size());
  for_each_row(shape, dim, [&](const std::vector<size_t>& row) {
    double m = -INFINITY, s = 0;
    for (size_t i : row) m = std::max(m, x[i]);
    for (size_t i : row) s += std::exp(x[i] - m);
    for (size_t i : row) y[i] = log ? x[i] - m - std::log(s) : std::exp(x[i] - m) / s;
  });
  return y;
}

// The gradient of x given the output gradient g and the output y.
std::vector<double> softmax_grad_reference(const Shape& shape, int dim, const std::vector<double>& g,
                                           const std::vector<double>& y, bool log) {
  std::vector<double> gx(g.size());
  for_each_row(shape, dim, [&](const std::vector<size_t>& row) {
    double s = 0;
    for (size_t i : row) s += log ? g[i] : g[i] * y[i];
    for (size_t i : row) gx[i] = log ? g[i] - std::exp(y[i]) * s : y[i] * (g[i] - s);
  });
  return gx;
}

}  // namespace

TEST_CASE("softmax and log_softmax match a reference in f32 (oneDNN) and f64", "[reduction][softmax]") {
  Runtime rt;
  const Shape shape{2, 3, 5};
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = random_tensor(rt, shape, dtype, -3.0, 3.0, 5);
    const std::vector<double> xv = values(rt, x);
    for (int dim : {0, 1, 2}) {
      for (bool log : {false, true}) {
        INFO(dtype_name(dtype) << " dim " << dim << (log ? " log_softmax" : " softmax"));
        const char* name = log ? "log_softmax" : "softmax";
        Tensor y = rt.call1(name, {x}, {{"dim", dim == 2 ? -1 : dim}});
        const std::vector<double> yv = softmax_reference(shape, dim, xv, log);
        require_close(rt, y, yv, 1e-6, 1e-5);

        Tensor g = random_tensor(rt, shape, dtype, -1.0, 1.0, 9);
        Tensor gx = rt.call1(std::string(name) + "_backward", {g, y}, {{"dim", dim}});
        require_close(rt, gx, softmax_grad_reference(shape, dim, values(rt, g), values(rt, y), log), 1e-6, 1e-5);
      }
    }
  }
}

TEST_CASE("f32 softmax_backward over dense rows, eight at a time and the rest, matches the reference",
          "[reduction][softmax]") {
  Runtime rt;
  // Rows shorter than eight, a multiple of eight, and with a remainder.
  for (int64_t n : {3, 16, 21, 64}) {
    INFO("rows of " << n);
    const Shape shape{2, 5, n};
    const Tensor y = rt.call1("softmax", {random_tensor(rt, shape, DType::f32, -3.0, 3.0, 5)});
    const Tensor g = random_tensor(rt, shape, DType::f32, -1.0, 1.0, 9);
    const Tensor gx = rt.call1("softmax_backward", {g, y}, {{"dim", -1}});
    require_close(rt, gx, softmax_grad_reference(shape, 2, values(rt, g), values(rt, y), false), 1e-6, 1e-5);
  }
}

TEST_CASE("softmax stays finite for large logits and reads strided input", "[reduction][softmax]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = make_tensor(rt, {2, 3}, {1000, 1001, 1002, -1000, -1001, -1002}, dtype);
    const std::vector<double> xv = values(rt, x);
    require_close(rt, rt.call1("softmax", {x}), softmax_reference({2, 3}, 1, xv, false), 1e-6, 1e-5);
    require_close(rt, rt.call1("log_softmax", {x}), softmax_reference({2, 3}, 1, xv, true), 1e-6, 1e-5);
    Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});
    require_close(rt, rt.call1("softmax", {t}), softmax_reference({3, 2}, 1, values(rt, t), false), 1e-6, 1e-5);
    require_close(rt, rt.call1("softmax", {rt.full({}, 3.0, dtype)}), {1.0});
  }
}

TEST_CASE("softmax gradients match finite differences", "[reduction][softmax][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4, 2}, DType::f64, -2.0, 2.0, 13);
  for (const char* op : {"softmax", "log_softmax"}) {
    INFO(op);
    gradcheck(rt, op, {x});
    gradcheck(rt, op, {x}, {{"dim", 1}});
    gradcheck(rt, op, {x}, {{"dim", 0}});
  }
}

TEST_CASE("softmax rejects a bad dim and integer input", "[reduction][softmax][errors]") {
  Runtime rt;
  require_error([&] { rt.call1("softmax", {rt.full({2, 3}, 1.0)}, {{"dim", 2}}); }, Status::invalid_argument,
                {"softmax"});
  require_error([&] { rt.call1("log_softmax", {rt.full({2, 3}, 1.0, DType::i32)}); }, Status::dtype_mismatch,
                {"op 'log_softmax'", "i32"});
}

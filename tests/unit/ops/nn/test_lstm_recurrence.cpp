#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct RecurrenceCase {
  int64_t steps, batch, hidden;
  bool bias, reverse;
};

// Batches of 1, 5 (one block of rows) and 9 (split over two threads in
// blocks of 5 and 4), both directions, with and without b_hh. Hidden sizes
// of 16 and 32 take the f32 kernel's packed products (where the CPU has
// AVX2); their 16 and 13 rows give each thread blocks of 6 and 2, 6 and 1.
const RecurrenceCase kCases[] = {
    {4, 3, 2, true, false}, {5, 1, 3, true, true},   {3, 9, 4, false, false}, {6, 9, 3, true, true},
    {1, 5, 5, false, true}, {3, 16, 16, true, false}, {2, 13, 32, false, true},
};

std::string describe(const RecurrenceCase& k) {
  return "T " + std::to_string(k.steps) + " N " + std::to_string(k.batch) + " H " + std::to_string(k.hidden) +
         (k.bias ? " bias" : "") + (k.reverse ? " reverse" : "");
}

// x_proj, h0, c0, weight_hh and, with bias, bias_hh. `scale` widens the
// pre-activations (saturated gates).
std::vector<Tensor> inputs_of(Runtime& rt, const RecurrenceCase& k, DType dtype, double scale = 1.0) {
  const int64_t g = 4 * k.hidden;
  std::vector<Tensor> in{random_tensor(rt, {k.steps, k.batch, g}, dtype, -scale, scale, 11),
                         random_tensor(rt, {k.batch, k.hidden}, dtype, -1, 1, 12),
                         random_tensor(rt, {k.batch, k.hidden}, dtype, -1, 1, 13),
                         random_tensor(rt, {g, k.hidden}, dtype, -scale, scale, 14)};
  if (k.bias) in.push_back(random_tensor(rt, {g}, dtype, -scale, scale, 15));
  return in;
}

Attrs attrs_of(Runtime& rt, const RecurrenceCase& k) {
  return rt.op("lstm_recurrence").make_attrs({{"reverse", k.reverse}});
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Expected {
  std::vector<double> output, h_n, c_n;
};

// The recurrence from its definition, one step and one row at a time.
Expected reference(Runtime& rt, const RecurrenceCase& k, const std::vector<Tensor>& in) {
  const std::vector<double> x = values(rt, in[0]), w = values(rt, in[3]);
  const std::vector<double> b = k.bias ? values(rt, in[4]) : std::vector<double>(size_t(4 * k.hidden), 0.0);
  std::vector<double> h = values(rt, in[1]), c = values(rt, in[2]);
  const int64_t n = k.hidden;
  Expected e;
  e.output.resize(size_t(k.steps * k.batch * n));
  for (int64_t step = 0; step < k.steps; ++step) {
    const int64_t t = k.reverse ? k.steps - 1 - step : step;
    std::vector<double> h_next(h.size()), c_next(c.size());
    for (int64_t r = 0; r < k.batch; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double pre[4];
        for (int gate = 0; gate < 4; ++gate) {
          const int64_t row = gate * n + j;
          double acc = x[size_t((t * k.batch + r) * 4 * n + row)] + b[size_t(row)];
          for (int64_t p = 0; p < n; ++p) acc += h[size_t(r * n + p)] * w[size_t(row * n + p)];
          pre[gate] = acc;
        }
        const double cell = sigmoid(pre[1]) * c[size_t(r * n + j)] + sigmoid(pre[0]) * std::tanh(pre[2]);
        c_next[size_t(r * n + j)] = cell;
        h_next[size_t(r * n + j)] = sigmoid(pre[3]) * std::tanh(cell);
      }
    h = h_next;
    c = c_next;
    std::copy(h.begin(), h.end(), e.output.begin() + t * k.batch * n);
  }
  e.h_n = h;
  e.c_n = c;
  return e;
}

// The gradients of every input of sum(output * w0) + sum(h_n * w1) + sum(c_n * w2).
std::vector<std::vector<double>> gradients(Runtime& rt, const RecurrenceCase& k, DType dtype) {
  std::vector<Tensor> in = inputs_of(rt, k, dtype);
  for (Tensor& t : in) t.set_requires_grad(true);
  const std::vector<Tensor> out = rt.call(rt.op("lstm_recurrence"), in, attrs_of(rt, k));
  REQUIRE(out.size() == 3);
  Tensor loss = rt.call1("sum", {rt.call1("mul", {out[0], random_tensor(rt, out[0].shape(), dtype, -1, 1, 21)})});
  for (size_t i = 1; i < 3; ++i)
    loss = rt.call1("add", {loss, rt.call1("sum", {rt.call1("mul", {out[i], random_tensor(rt, out[i].shape(), dtype,
                                                                                              -1, 1, 21 + i)})})});
  rt.backward(loss);
  std::vector<std::vector<double>> grads;
  for (const Tensor& t : in) grads.push_back(values(rt, t.grad()));
  return grads;
}

}  // namespace

TEST_CASE("lstm_recurrence matches the LSTM step applied over the sequence", "[nn][lstm]") {
  Runtime rt({.num_threads = 2});
  for (const RecurrenceCase& k : kCases)
    for (double scale : {1.0, 30.0}) {  // 30: saturated gates, exp at its clamps
      for (DType t : {DType::f64, DType::f32}) {
        INFO(dtype_name(t) << " " << describe(k) << " scale " << scale);
        // The reference takes the very inputs (f32 ones exactly, in double).
        const std::vector<Tensor> in = inputs_of(rt, k, t, scale);
        const Expected e = reference(rt, k, in);
        const std::vector<Tensor> out = rt.call(rt.op("lstm_recurrence"), in, attrs_of(rt, k));
        REQUIRE(out.size() == 3);
        CHECK(out[0].shape() == Shape{k.steps, k.batch, k.hidden});
        CHECK(out[1].shape() == Shape{k.batch, k.hidden});
        // f32 sums pre-activations of up to 6 scale in size, each rounded.
        const double tol = t == DType::f64 ? 1e-12 : 2e-6 * scale;
        require_close(rt, out[0], e.output, tol, tol);
        require_close(rt, out[1], e.h_n, tol, tol);
        require_close(rt, out[2], e.c_n, tol, tol);
      }
    }
}

TEST_CASE("lstm_recurrence gives a NaN input's rows NaN and leaves the other rows alone", "[nn][lstm]") {
  Runtime rt({.num_threads = 2});
  const RecurrenceCase k{3, 9, 2, true, false};
  for (DType t : {DType::f64, DType::f32}) {
    INFO(dtype_name(t));
    std::vector<Tensor> in = inputs_of(rt, k, t);
    std::vector<double> h0 = values(rt, in[1]);
    h0[0] = std::numeric_limits<double>::quiet_NaN();  // row 0 only
    in[1] = make_tensor(rt, in[1].shape(), h0, t);
    const std::vector<double> out = values(rt, rt.call(rt.op("lstm_recurrence"), in, attrs_of(rt, k))[1]);
    CHECK(std::isnan(out[0]));
    CHECK(std::isnan(out[1]));
    for (size_t i = 2; i < out.size(); ++i) CHECK(std::isfinite(out[i]));
  }
}

TEST_CASE("lstm_recurrence gradients match finite differences", "[nn][lstm][grad]") {
  Runtime rt({.num_threads = 2});
  for (const RecurrenceCase& k : kCases) {
    INFO(describe(k));
    gradcheck(rt, rt.op("lstm_recurrence"), inputs_of(rt, k, DType::f64), attrs_of(rt, k));
  }
}

TEST_CASE("lstm_recurrence f32 gradients agree with f64's", "[nn][lstm][grad]") {
  Runtime rt({.num_threads = 2});
  for (const RecurrenceCase& k : kCases) {
    INFO(describe(k));
    const auto exact = gradients(rt, k, DType::f64);
    const auto single = gradients(rt, k, DType::f32);
    for (size_t i = 0; i < exact.size(); ++i) require_close(single[i], exact[i], 1e-5, 1e-4);
  }
}

TEST_CASE("lstm_recurrence gives the same results on one thread and on two", "[nn][lstm]") {
  const RecurrenceCase k{5, 9, 3, true, true};
  Runtime one({.num_threads = 1}), two({.num_threads = 2});
  const auto a = gradients(one, k, DType::f32), b = gradients(two, k, DType::f32);
  for (size_t i = 0; i < a.size(); ++i) require_close(a[i], b[i], 1e-6, 1e-5);
}

TEST_CASE("lstm_recurrence rejects inputs that do not fit", "[nn][lstm][errors]") {
  Runtime rt;
  const auto t = [&](const Shape& s) { return rt.full(s, 0.5, DType::f32); };
  const auto call = [&](std::vector<Tensor> in) {
    return [&rt, in] { rt.call(rt.op("lstm_recurrence"), in, rt.op("lstm_recurrence").default_attrs()); };
  };
  const std::string name = "op 'lstm_recurrence'";
  require_error(call({t({3, 2, 8}), t({2, 2}), t({2, 2}), t({8, 3})}), Status::shape_mismatch,
                {name, "weight_hh must be [4H, H]", "[8, 3]"});
  require_error(call({t({3, 2, 12}), t({2, 2}), t({2, 2}), t({8, 2})}), Status::shape_mismatch,
                {name, "x_proj must be [T, N, 4H] = [3, 2, 8]", "[3, 2, 12]"});
  require_error(call({t({0, 2, 8}), t({2, 2}), t({2, 2}), t({8, 2})}), Status::shape_mismatch,
                {name, "x_proj holds no step"});
  require_error(call({t({3, 2, 8}), t({3, 2}), t({2, 2}), t({8, 2})}), Status::shape_mismatch,
                {name, "h0 must be [N, H] = [2, 2]", "[3, 2]"});
  require_error(call({t({3, 2, 8}), t({2, 2}), t({2, 2}), t({8, 2}), t({4})}), Status::shape_mismatch,
                {name, "bias_hh must be [4H] = [8]", "[4]"});
  require_error(call({t({3, 2, 8}), t({2, 2}), rt.full({2, 2}, 0.5, DType::f64), t({8, 2})}), Status::dtype_mismatch,
                {name});
  require_error(call({t({3, 8}), t({2, 2}), t({2, 2}), t({8, 2})}), Status::shape_mismatch, {name, "x_proj"});
}

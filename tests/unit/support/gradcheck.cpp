#include "support/gradcheck.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "kiln/autograd/grad_mode.hpp"

namespace kiln::test {

Tensor make_tensor(Runtime& rt, const Shape& shape, const std::vector<double>& vals, DType dtype) {
  REQUIRE(int64_t(vals.size()) == shape.numel());
  Tensor t = rt.empty(shape, dtype);
  visit_dtype(dtype, [&]<class T>() {
    T* p = t.data<T>();
    for (size_t i = 0; i < vals.size(); ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) p[i] = from_float<T>(float(vals[i]));
      else p[i] = static_cast<T>(vals[i]);
    }
  });
  return t;
}

Tensor random_tensor(Runtime& rt, const Shape& shape, DType dtype, double lo, double hi, uint64_t seed) {
  std::mt19937_64 gen(seed * 7919 + uint64_t(shape.numel()));
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> vals(size_t(shape.numel()));
  for (double& v : vals) v = dist(gen);
  return make_tensor(rt, shape, vals, dtype);
}

std::vector<double> values(Runtime& rt, const Tensor& t) {
  Tensor dense = rt.contiguous(t);
  std::vector<double> out(size_t(dense.numel()));
  visit_dtype(dense.dtype(), [&]<class T>() {
    const T* p = dense.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) out[i] = to_float(p[i]);
      else out[i] = static_cast<double>(p[i]);
    }
  });
  return out;
}

void require_close(const std::vector<double>& actual, const std::vector<double>& expected, double atol,
                   double rtol) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(e)) {
      INFO("element " << i << ": expected NaN, got " << a);
      REQUIRE(std::isnan(a));
      continue;
    }
    if (std::isinf(e)) {
      INFO("element " << i << ": expected " << e << ", got " << a);
      REQUIRE(a == e);
      continue;
    }
    INFO("element " << i << ": got " << a << ", expected " << e);
    REQUIRE(std::abs(a - e) <= atol + rtol * std::abs(e));
  }
}

void require_close(Runtime& rt, const Tensor& actual, const std::vector<double>& expected, double atol, double rtol) {
  require_close(values(rt, actual), expected, atol, rtol);
}

void require_error(const std::function<void()>& call, Status status, const std::vector<std::string>& parts) {
  try {
    call();
  } catch (const Error& e) {
    CHECK(e.status() == status);
    for (const std::string& p : parts) CHECK_THAT(e.what(), Catch::Contains(p));
    return;
  }
  FAIL("no error was raised");
}

bool cpu_runs_bf16(Runtime& rt) {
  try {
    rt.call1("matmul", {rt.full({2, 2}, 1.0, DType::bf16), rt.full({2, 2}, 1.0, DType::bf16)});
    return true;
  } catch (const Error& e) {
    CHECK(e.status() == Status::unsupported);
    CHECK_THAT(e.what(), Catch::Contains("no bf16 support"));
    WARN("this CPU has no bf16 support in oneDNN: " << e.what());
    return false;
  }
}

namespace {

bool skipped(const GradcheckOptions& o, size_t i) {
  return std::find(o.skip_inputs.begin(), o.skip_inputs.end(), i) != o.skip_inputs.end();
}

// <w, outputs> computed on the host, so the scalar itself involves no op.
double weighted_sum(Runtime& rt, const std::vector<Tensor>& outputs, const std::vector<std::vector<double>>& w) {
  double s = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (w[k].empty()) continue;
    const std::vector<double> v = values(rt, outputs[k]);
    for (size_t i = 0; i < v.size(); ++i) s += v[i] * w[k][i];
  }
  return s;
}

void check_gradients(Runtime& rt, const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& run,
                     const std::vector<Tensor>& given, const GradcheckOptions& options, const std::string& what) {
  // Fresh leaves so earlier gradients cannot leak in.
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < given.size(); ++i) {
    if (!given[i].defined()) {
      inputs.emplace_back();
      continue;
    }
    Tensor leaf = rt.contiguous(given[i]).detach();
    if (is_floating(leaf.dtype()) && !skipped(options, i)) {
      INFO(what << ": input " << i << " must be f64 for a gradient check");
      REQUIRE(leaf.dtype() == DType::f64);
      leaf.set_requires_grad(true);
    }
    inputs.push_back(leaf);
  }
  std::vector<Tensor> outputs = run(inputs);
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> w(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!is_floating(outputs[k].dtype()) || !outputs[k].requires_grad()) continue;
    w[k].resize(size_t(outputs[k].numel()));
    for (double& x : w[k]) x = dist(gen);
    rt.backward(outputs[k], make_tensor(rt, outputs[k].shape(), w[k], outputs[k].dtype()), /*retain_graph=*/true);
  }

  NoGradGuard no_grad(rt);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    Tensor grad = inputs[i].grad();
    INFO(what << ": input " << i << " received no gradient");
    REQUIRE(grad.defined());
    const std::vector<double> analytic = values(rt, grad);
    double* x = inputs[i].data<double>();
    for (int64_t j = 0; j < inputs[i].numel(); ++j) {
      const double saved = x[j];
      x[j] = saved + options.eps;
      const double plus = weighted_sum(rt, run(inputs), w);
      x[j] = saved - options.eps;
      const double minus = weighted_sum(rt, run(inputs), w);
      x[j] = saved;
      const double numeric = (plus - minus) / (2 * options.eps);
      INFO(what << ": d/d input " << i << " element " << j << ": analytic " << analytic[size_t(j)] << ", numeric "
                << numeric);
      REQUIRE(std::abs(analytic[size_t(j)] - numeric) <= options.atol + options.rtol * std::abs(numeric));
    }
  }
}

}  // namespace

void gradcheck(Runtime& rt, const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
               const GradcheckOptions& options) {
  check_gradients(
      rt, [&](const std::vector<Tensor>& in) { return rt.call(op, in, attrs); }, inputs, options, "op '" + op.name + "'");
}

void gradcheck(Runtime& rt, std::string_view op, const std::vector<Tensor>& inputs, NamedAttrs attrs,
               const GradcheckOptions& options) {
  const OpDef& def = rt.op(op);
  gradcheck(rt, def, inputs, def.make_attrs(attrs), options);
}

void gradcheck_fn(Runtime& rt, const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                  const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  check_gradients(
      rt, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in)}; }, inputs, options, "function");
}

}  // namespace kiln::test

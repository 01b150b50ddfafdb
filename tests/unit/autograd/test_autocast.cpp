// The autocast policy of the dispatcher: which dtype each category of op
// runs in, an MLP and a small CNN against f32 forward and backward, and the
// scopes themselves (nesting, threads, runtimes). The bf16 parts are
// skipped where the CPU has no bf16 support (test_low_precision checks the
// error it gives).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "kiln/autograd/grad_mode.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/autocast.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor param(Runtime& rt, const Shape& shape, double scale, uint64_t seed) {
  Tensor t = random_tensor(rt, shape, DType::f32, -scale, scale, seed);
  t.set_requires_grad(true);
  return t;
}

Tensor labels(Runtime& rt, int64_t n, int64_t classes) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(double((i * 7 + 3) % classes));
  return make_tensor(rt, {n}, v, DType::i64);
}

// ||a - b|| / ||b|| over all elements.
double relative_error(Runtime& rt, const Tensor& a, const Tensor& b) {
  const std::vector<double> x = values(rt, a), y = values(rt, b);
  REQUIRE(x.size() == y.size());
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff += (x[i] - y[i]) * (x[i] - y[i]);
    norm += y[i] * y[i];
  }
  return std::sqrt(diff / norm);
}

// A model: its parameters and a forward from an input to logits.
struct Model {
  std::vector<Tensor> params;
  std::function<Tensor(const Tensor&)> forward;
};

Model mlp(Runtime& rt) {
  Model m;
  m.params = {param(rt, {64, 32}, 0.2, 11), param(rt, {64}, 0.1, 12), param(rt, {10, 64}, 0.2, 13),
              param(rt, {10}, 0.1, 14)};
  m.forward = [&rt, p = m.params](const Tensor& x) {
    const Tensor h = rt.call1("relu", {rt.call1("linear", {x, p[0], p[1]})});
    return rt.call1("linear", {h, p[2], p[3]});
  };
  return m;
}

// conv 1->8 5x5 pad 2, relu, pool 2, conv 8->16 3x3 pad 1, relu, pool 2,
// flatten, linear 144->10: the Fashion-MNIST CNN in miniature.
Model cnn(Runtime& rt) {
  Model m;
  m.params = {param(rt, {8, 1, 5, 5}, 0.3, 21), param(rt, {8}, 0.1, 22), param(rt, {16, 8, 3, 3}, 0.15, 23),
              param(rt, {16}, 0.1, 24), param(rt, {10, 144}, 0.1, 25), param(rt, {10}, 0.1, 26)};
  m.forward = [&rt, p = m.params](const Tensor& x) {
    const NamedAttrs pool = {{"kernel_size", std::vector<int64_t>{2, 2}}};
    Tensor h = rt.call1("conv2d", {x, p[0], p[1]}, {{"padding", std::vector<int64_t>{2, 2}}});
    h = rt.call1("max_pool2d", {rt.call1("relu", {h})}, pool);
    h = rt.call1("conv2d", {h, p[2], p[3]}, {{"padding", std::vector<int64_t>{1, 1}}});
    h = rt.call1("max_pool2d", {rt.call1("relu", {h})}, pool);
    h = rt.call1("reshape", {h}, {{"shape", std::vector<int64_t>{x.dim(0), -1}}});
    return rt.call1("linear", {h, p[4], p[5]});
  };
  return m;
}

struct Run {
  Tensor logits, loss;
  std::vector<Tensor> grads;
};

// Forward and loss (under autocast in `dtype` unless f32), then backward
// outside the scope (or inside it when `backward_inside`).
Run train_step(Runtime& rt, Model& m, const Tensor& x, const Tensor& y, DType dtype, bool backward_inside = false) {
  for (Tensor& p : m.params) p.set_grad(Tensor());
  Run r;
  {
    AutocastGuard scope(rt, dtype);
    r.logits = m.forward(x);
    r.loss = rt.call1("cross_entropy", {r.logits, y});
    if (backward_inside) rt.backward(r.loss);
  }
  if (!backward_inside) rt.backward(r.loss);
  for (const Tensor& p : m.params) r.grads.push_back(p.grad());
  return r;
}

// t's values rounded to bf16 and back, in place: what a bf16 product sees.
void round_through_bf16(Runtime& rt, const Tensor& t) {
  NoGradGuard no_grad(rt);
  const Tensor low = rt.call1("cast", {t}, {{"dtype", DType::bf16}});
  const Tensor back = rt.call1("cast", {low}, {{"dtype", DType::f32}});
  std::memcpy(t.raw_data(), back.raw_data(), t.nbytes());
}

// The model trained one step under bf16 autocast against f32. Outputs agree
// within bf16's rounding. Gradients at a random start largely cancel across
// samples and positions, so rounding alone moves some of them by several
// percent: each must be as close to f32's as the f32 gradient of the same
// model with its parameters and input rounded to bf16 is, with a margin.
void compare_with_f32(Runtime& rt, Model (*make)(Runtime&), const Tensor& x, const Tensor& y) {
  Model m = make(rt);
  const Run full = train_step(rt, m, x, y, DType::f32);
  const Run low = train_step(rt, m, x, y, DType::bf16);
  CHECK(full.logits.dtype() == DType::f32);
  CHECK(low.logits.dtype() == DType::bf16);  // the last op is a product
  CHECK(low.loss.dtype() == DType::f32);     // losses run in f32
  CHECK(relative_error(rt, low.logits, full.logits) < 2e-2);
  CHECK(std::abs(values(rt, low.loss)[0] - values(rt, full.loss)[0]) < 1e-2 * std::abs(values(rt, full.loss)[0]));

  Model rounded_model = make(rt);
  for (const Tensor& p : rounded_model.params) round_through_bf16(rt, p);
  const Tensor rounded_x = rt.call1("copy", {x});
  round_through_bf16(rt, rounded_x);
  const Run rounded = train_step(rt, rounded_model, rounded_x, y, DType::f32);
  for (size_t i = 0; i < m.params.size(); ++i) {
    const double error = relative_error(rt, low.grads[i], full.grads[i]);
    const double rounding = relative_error(rt, rounded.grads[i], full.grads[i]);
    INFO("parameter " << i << " " << to_string(m.params[i].shape()) << ": relative error " << error
                      << ", from rounding the inputs alone " << rounding);
    CHECK(m.params[i].dtype() == DType::f32);
    REQUIRE(low.grads[i].defined());
    CHECK(low.grads[i].dtype() == DType::f32);
    CHECK(error < 1.5 * rounding + 2e-2);
  }
}

}  // namespace

TEST_CASE("autocast off leaves every dtype as it was", "[autocast]") {
  Runtime rt;
  CHECK(autocast_dtype(rt) == DType::f32);
  const Tensor x = random_tensor(rt, {4, 8}, DType::f32), w = random_tensor(rt, {3, 8}, DType::f32);
  CHECK(rt.call1("linear", {x, w}).dtype() == DType::f32);
  CHECK(rt.call1("matmul", {x, rt.call1("transpose", {w}, {{"dim0", 0}, {"dim1", 1}})}).dtype() == DType::f32);
  const Tensor low = rt.full({4, 8}, 1.0, DType::bf16);
  CHECK(rt.call1("softmax", {low}).dtype() == DType::bf16);
  // Mixed dtypes are still refused outside a scope: nothing is cast silently.
  require_error([&] { rt.call1("add", {low, x}); }, Status::dtype_mismatch, {"add"});
}

TEST_CASE("under autocast products run low, precision-sensitive ops in f32, others promote", "[autocast]") {
  Runtime rt;
  if (!cpu_runs_bf16(rt)) return;
  const Tensor x = random_tensor(rt, {4, 8}, DType::f32), w = random_tensor(rt, {3, 8}, DType::f32);
  const Tensor b = random_tensor(rt, {3}, DType::f32), low = rt.full({4, 8}, 0.5, DType::bf16);
  const Tensor x64 = random_tensor(rt, {4, 8}, DType::f64), w64 = random_tensor(rt, {3, 8}, DType::f64);
  AutocastGuard scope(rt, DType::bf16);
  CHECK(autocast_dtype(rt) == DType::bf16);
  // lower
  CHECK(rt.call1("linear", {x, w, b}).dtype() == DType::bf16);
  CHECK(rt.call1("matmul", {x, rt.call1("transpose", {w}, {{"dim0", 0}, {"dim1", 1}})}).dtype() == DType::bf16);
  CHECK(rt.call1("conv2d", {rt.full({1, 2, 5, 5}, 1.0), rt.full({3, 2, 3, 3}, 1.0)}).dtype() == DType::bf16);
  // f64 is never narrowed: a product with an f64 input promotes instead.
  CHECK(rt.call1("linear", {x64, w64}).dtype() == DType::f64);
  CHECK(rt.call1("linear", {x, w64}).dtype() == DType::f64);
  // f32
  for (const char* op : {"softmax", "log_softmax", "exp", "log", "sum", "mean"}) {
    INFO("op " << op);
    CHECK(rt.call1(op, {low}).dtype() == DType::f32);
  }
  CHECK(rt.call1("pow", {low}, {{"exponent", 2.0}}).dtype() == DType::f32);
  CHECK(rt.call1("cross_entropy", {low, labels(rt, 4, 8)}).dtype() == DType::f32);
  CHECK(rt.call1("mse_loss", {low, x}).dtype() == DType::f32);
  const NamedAttrs norm = {{"normalized_shape", std::vector<int64_t>{8}}};
  CHECK(rt.call1("layer_norm", {low, rt.full({8}, 1.0), rt.full({8}, 0.0)}, norm).dtype() == DType::f32);
  // promote
  CHECK(rt.call1("relu", {low}).dtype() == DType::bf16);
  CHECK(rt.call1("add", {low, low}).dtype() == DType::bf16);
  CHECK(rt.call1("add", {low, x}).dtype() == DType::f32);
  CHECK(rt.call1("add", {low, rt.full({4, 8}, 1.0, DType::f16)}).dtype() == DType::f32);
  CHECK(rt.call1("mul", {x64, x}).dtype() == DType::f64);
  CHECK(rt.call1("max", {low}).dtype() == DType::bf16);
  CHECK(rt.call1("reshape", {low}, {{"shape", std::vector<int64_t>{32}}}).dtype() == DType::bf16);
  // Integer inputs are left alone.
  CHECK(rt.call1("add", {labels(rt, 4, 8), labels(rt, 4, 8)}).dtype() == DType::i64);
}

TEST_CASE("an op without a 16-bit kernel runs in f32 under autocast", "[autocast]") {
  Runtime rt;
  OpDef op;
  op.name = "test_f32_only";
  op.inputs = {{"input"}};
  op.infer = [](InferCall& c) { c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device}); };
  op.set_kernel(DeviceType::cpu, DType::f32, [](const KernelCall& c) {
    for (int64_t i = 0; i < c.inputs[0].numel(); ++i)
      c.outputs[0].data<float>()[i] = 2 * c.inputs[0].data<float>()[i];
  });
  const OpDef& f32_only = rt.registry().add(std::move(op));
  const Tensor low = rt.full({3}, 1.5, DType::bf16);
  require_error([&] { rt.call1(f32_only, {low}); }, Status::unsupported, {"test_f32_only", "bf16"});
  AutocastGuard scope(rt, DType::bf16);
  const Tensor out = rt.call1(f32_only, {low});
  CHECK(out.dtype() == DType::f32);
  require_close(rt, out, {3, 3, 3});
}

TEST_CASE("an MLP under bf16 autocast: outputs and f32 gradients close to f32's", "[autocast][composite]") {
  Runtime rt;
  if (!cpu_runs_bf16(rt)) return;
  compare_with_f32(rt, mlp, random_tensor(rt, {16, 32}, DType::f32, -1, 1, 1), labels(rt, 16, 10));
}

TEST_CASE("a small CNN under bf16 autocast: outputs and f32 gradients close to f32's", "[autocast][composite]") {
  Runtime rt;
  if (!cpu_runs_bf16(rt)) return;
  compare_with_f32(rt, cnn, random_tensor(rt, {4, 1, 12, 12}, DType::f32, -1, 1, 2), labels(rt, 4, 10));
}

TEST_CASE("backward inside an autocast scope runs as it would outside", "[autocast]") {
  Runtime rt;
  if (!cpu_runs_bf16(rt)) return;
  Model m = mlp(rt);
  const Tensor x = random_tensor(rt, {8, 32}, DType::f32, -1, 1, 3), y = labels(rt, 8, 10);
  const Run outside = train_step(rt, m, x, y, DType::bf16);
  const Run inside = train_step(rt, m, x, y, DType::bf16, true);
  for (size_t i = 0; i < m.params.size(); ++i) require_close(rt, inside.grads[i], values(rt, outside.grads[i]), 0, 0);
}

TEST_CASE("autocast scopes nest, and f32 turns autocast off inside", "[autocast]") {
  Runtime rt;
  {
    AutocastGuard outer(rt, DType::bf16);
    CHECK(autocast_dtype(rt) == DType::bf16);
    {
      AutocastGuard off(rt, DType::f32);
      CHECK(autocast_dtype(rt) == DType::f32);
      CHECK(rt.call1("linear", {rt.full({2, 4}, 1.0), rt.full({3, 4}, 1.0)}).dtype() == DType::f32);
      {
        AutocastGuard half(rt, DType::f16);
        CHECK(autocast_dtype(rt) == DType::f16);
      }
      CHECK(autocast_dtype(rt) == DType::f32);
    }
    CHECK(autocast_dtype(rt) == DType::bf16);
  }
  CHECK(autocast_dtype(rt) == DType::f32);
  CHECK_FALSE(pop_autocast(rt));
  require_error([&] { push_autocast(rt, DType::i32); }, Status::invalid_argument, {"i32", "bf16 or f16"});
  require_error([&] { push_autocast(rt, DType::f64); }, Status::invalid_argument, {"f64"});
  CHECK(autocast_dtype(rt) == DType::f32);
}

TEST_CASE("autocast belongs to one runtime on one thread", "[autocast]") {
  Runtime rt, other;
  const Tensor x = rt.full({2, 4}, 1.0), w = rt.full({3, 4}, 1.0);
  AutocastGuard scope(rt, DType::bf16);
  CHECK(autocast_dtype(other) == DType::f32);
  CHECK(other.call1("linear", {other.full({2, 4}, 1.0), other.full({3, 4}, 1.0)}).dtype() == DType::f32);
  DType seen = DType::bf16, output = DType::bf16;
  std::thread worker([&] {
    seen = autocast_dtype(rt);
    output = rt.call1("linear", {x, w}).dtype();
  });
  worker.join();
  CHECK(seen == DType::f32);
  CHECK(output == DType::f32);
  CHECK(autocast_dtype(rt) == DType::bf16);
}


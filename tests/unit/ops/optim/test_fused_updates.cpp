// "sgd_update" and "adam_update" against a double-precision reference of
// torch.optim.SGD / Adam / AdamW (written out here, independently of the
// kernels), over several steps and several parameters of odd sizes, in
// every floating dtype; and every check of their infer function.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "fused_update_support.hpp"
#include "kiln/error.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct SgdOptions {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};

struct AdamOptions {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled, amsgrad, maximize;
};

// One parameter's values and state, in double.
struct RefParam {
  std::vector<double> p, s0, s1, s2;
};

void sgd_reference(const SgdOptions& o, int step, RefParam& r, const std::vector<double>& grad) {
  for (size_t i = 0; i < r.p.size(); ++i) {
    double d = o.maximize ? -grad[i] : grad[i];
    d += o.weight_decay * r.p[i];
    if (o.momentum != 0) {
      r.s0[i] = step == 1 ? d : o.momentum * r.s0[i] + (1 - o.dampening) * d;
      d = o.nesterov ? d + o.momentum * r.s0[i] : r.s0[i];
    }
    r.p[i] -= o.lr * d;
  }
}

void adam_reference(const AdamOptions& o, int step, RefParam& r, const std::vector<double>& grad) {
  const double bc1 = 1 - std::pow(o.beta1, step), bc2 = 1 - std::pow(o.beta2, step);
  for (size_t i = 0; i < r.p.size(); ++i) {
    double g = o.maximize ? -grad[i] : grad[i];
    if (o.decoupled) r.p[i] *= 1 - o.lr * o.weight_decay;
    else g += o.weight_decay * r.p[i];
    r.s0[i] = o.beta1 * r.s0[i] + (1 - o.beta1) * g;
    r.s1[i] = o.beta2 * r.s1[i] + (1 - o.beta2) * g * g;
    double second = r.s1[i];
    if (o.amsgrad) second = r.s2[i] = std::max(r.s2[i], r.s1[i]);
    r.p[i] -= o.lr / bc1 * r.s0[i] / (std::sqrt(second) / std::sqrt(bc2) + o.eps);
  }
}

// Odd sizes (tails everywhere), an empty tensor, a scalar-like one.
const std::vector<Shape> kShapes = {{7}, {3, 5}, {0}, {1}, {2, 3, 11}, {257}};

struct Tolerance {
  double atol, rtol;
};

Tolerance tolerance_of(DType t) {
  if (t == DType::f64) return {1e-12, 1e-10};
  if (t == DType::f32) return {1e-6, 1e-5};
  return {1e-2, 1e-2};
}

const DType kDtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};

// Runs `steps` updates of `op` and checks params and state against `reference` after each.
template <class Reference>
void check_trajectory(const std::string& op, const UpdateAttrs& fixed, int n_lists, DType dtype,
                      const Reference& reference, const std::function<UpdateAttrs(int)>& per_step) {
  INFO(op << " in " << dtype_name(dtype));
  Runtime rt;
  auto lists = make_update_lists(rt, kShapes, n_lists, dtype);
  std::vector<RefParam> ref;
  for (const Tensor& p : lists[0]) {
    const std::vector<double> v = values(rt, p);
    ref.push_back({v, std::vector<double>(v.size()), std::vector<double>(v.size()), std::vector<double>(v.size())});
  }
  const Tolerance tol = tolerance_of(dtype);
  for (int step = 1; step <= 4; ++step) {
    INFO("step " << step);
    const std::vector<std::vector<double>> grads = set_gradients(rt, lists, step);
    UpdateAttrs attrs = fixed;
    for (auto& a : per_step(step)) attrs.push_back(a);
    run_update(rt, op, lists, attrs);
    for (size_t i = 0; i < kShapes.size(); ++i) {
      INFO("parameter " << i);
      reference(step, ref[i], grads[i]);
      require_close(rt, lists[0][i], ref[i].p, tol.atol, tol.rtol);
      const std::vector<double>* state[] = {&ref[i].s0, &ref[i].s1, &ref[i].s2};
      for (int l = 2; l < n_lists; ++l) require_close(rt, lists[size_t(l)][i], *state[l - 2], tol.atol, tol.rtol);
    }
  }
}

void check_sgd(const SgdOptions& o) {
  const UpdateAttrs fixed = {{"lr", o.lr},
                             {"momentum", o.momentum},
                             {"dampening", o.dampening},
                             {"nesterov", o.nesterov},
                             {"weight_decay", o.weight_decay},
                             {"maximize", o.maximize}};
  for (DType t : kDtypes)
    check_trajectory(
        "sgd_update", fixed, o.momentum != 0 ? 3 : 2, t,
        [&](int step, RefParam& r, const std::vector<double>& g) { sgd_reference(o, step, r, g); },
        [](int step) { return UpdateAttrs{{"first_step", step == 1}}; });
}

void check_adam(const AdamOptions& o) {
  const UpdateAttrs fixed = {{"lr", o.lr},
                             {"beta1", o.beta1},
                             {"beta2", o.beta2},
                             {"eps", o.eps},
                             {"weight_decay", o.weight_decay},
                             {"decoupled", o.decoupled},
                             {"amsgrad", o.amsgrad},
                             {"maximize", o.maximize}};
  for (DType t : kDtypes)
    check_trajectory(
        "adam_update", fixed, o.amsgrad ? 5 : 4, t,
        [&](int step, RefParam& r, const std::vector<double>& g) { adam_reference(o, step, r, g); },
        [](int step) { return UpdateAttrs{{"step", int64_t(step)}}; });
}

}  // namespace

TEST_CASE("sgd_update follows torch.optim.SGD", "[optim]") {
  check_sgd({0.1, 0, 0, 0, false, false});       // plain
  check_sgd({0.05, 0.9, 0, 0, false, false});    // momentum
  check_sgd({0.05, 0.9, 0.3, 0.01, false, true});  // dampening, weight decay, maximize
  check_sgd({0.05, 0.8, 0, 0.1, true, false});   // Nesterov with weight decay
}

TEST_CASE("adam_update follows torch.optim.Adam and AdamW", "[optim]") {
  check_adam({0.01, 0.9, 0.999, 1e-8, 0, false, false, false});     // Adam
  check_adam({0.01, 0.8, 0.95, 1e-3, 0.1, false, false, true});     // L2 decay, maximize
  check_adam({0.02, 0.9, 0.99, 1e-8, 0, false, true, false});       // AMSGrad
  check_adam({0.01, 0.9, 0.999, 1e-8, 0.1, true, false, false});    // AdamW
  check_adam({0.02, 0.85, 0.9, 1e-6, 0.05, true, true, false});     // AdamW with AMSGrad
}

TEST_CASE("fused updates run with recording off on parameters that require grad", "[optim]") {
  Runtime rt;
  auto lists = make_update_lists(rt, {{3}}, 2, DType::f32);
  lists[0][0].set_requires_grad(true);
  set_gradients(rt, lists, 1);
  const std::vector<double> before = values(rt, lists[0][0]), grad = values(rt, lists[1][0]);
  run_update(rt, "sgd_update", lists, {{"lr", 0.5}});
  std::vector<double> want(before);
  for (size_t i = 0; i < want.size(); ++i) want[i] = double(float(before[i]) - 0.5f * float(grad[i]));
  require_close(rt, lists[0][0], want, 1e-7, 1e-6);
}

TEST_CASE("fused updates refuse bad lists, naming the op, the list and the index", "[optim][errors]") {
  Runtime rt;
  const OpDef& sgd = rt.op("sgd_update");
  const OpDef& adam = rt.op("adam_update");
  const Attrs sgd_plain = sgd.make_attrs({{"lr", 0.1}});
  const Attrs sgd_momentum = sgd.make_attrs({{"lr", 0.1}, {"momentum", 0.9}});
  const Attrs adam_step1 = adam.make_attrs({{"lr", 0.1}, {"step", int64_t(1)}});
  const auto f64 = [&](const Shape& s) { return rt.full(s, 1.0, DType::f64); };
  const auto call = [&](const OpDef& op, std::vector<Tensor> inputs, const Attrs& attrs) {
    return [&rt, &op, inputs = std::move(inputs), &attrs] {
      NoGradGuard no_grad(rt);
      rt.call(op, inputs, attrs);
    };
  };

  require_error(call(sgd, {f64({2}), f64({2}), f64({2})}, sgd_plain), Status::invalid_argument,
                {"op 'sgd_update'", "3 tensors do not make 2 lists", "params, grads"});
  require_error(call(sgd, {f64({2}), f64({2}), f64({2}), f64({2})}, sgd_momentum), Status::invalid_argument,
                {"op 'sgd_update'", "4 tensors do not make 3 lists", "params, grads, momentum_buffers"});
  require_error(call(adam, {}, adam_step1), Status::invalid_argument,
                {"op 'adam_update'", "0 tensors do not make 4 lists", "exp_avg, exp_avg_sq"});
  // Eight tensors are two Adam parameters, but not AMSGrad ones.
  require_error(call(adam, std::vector<Tensor>(8, f64({2})),
                     adam.make_attrs({{"lr", 0.1}, {"step", int64_t(1)}, {"amsgrad", true}})),
                Status::invalid_argument, {"op 'adam_update'", "8 tensors do not make 5 lists", "max_exp_avg_sq"});
  require_error(call(sgd, {rt.full({2}, 1.0, DType::i32), rt.full({2}, 1.0, DType::i32)}, sgd_plain),
                Status::dtype_mismatch, {"op 'sgd_update'", "params[0] is i32", "floating-point"});
  require_error(call(sgd, {f64({2}), f64({3}), f64({2}), rt.full({3}, 1.0, DType::f32)}, sgd_plain),
                Status::dtype_mismatch, {"op 'sgd_update'", "grads[1] is f32 but params[0] is f64"});
  require_error(call(adam, {f64({2}), f64({2}), f64({3}), f64({2}), f64({2}), f64({2})}, adam_step1),
                Status::invalid_argument, {"op 'adam_update'", "6 tensors do not make 4 lists"});
  require_error(call(adam, {f64({2}), f64({2}), f64({3}), f64({2})}, adam_step1), Status::shape_mismatch,
                {"op 'adam_update'", "exp_avg[0] has shape [3] but params[0] has [2]"});

  const Tensor strided = rt.call1("transpose", {f64({2, 3})}, {{"dim0", 0}, {"dim1", 1}});
  require_error(call(sgd, {f64({2, 3}), f64({3, 2}), f64({2, 3}), f64({3, 2}), f64({2, 3}), strided}, sgd_momentum),
                Status::invalid_argument,
                {"op 'sgd_update'", "momentum_buffers[1] is a strided view", "writes in place", "contiguous"});
  const Attrs step0 = adam.make_attrs({{"lr", 0.1}, {"step", int64_t(0)}});
  require_error(call(adam, {f64({2}), f64({2}), f64({2}), f64({2})}, step0), Status::invalid_argument,
                {"op 'adam_update'", "step must be at least 1", "got 0"});

  // In place while the tape records: a tensor that requires grad is refused.
  Tensor param = f64({2});
  param.set_requires_grad(true);
  const std::vector<Tensor> inputs = {param, f64({2})};
  require_error([&] { rt.call(sgd, inputs, sgd_plain); }, Status::invalid_state,
                {"op 'sgd_update'", "writes into its inputs in place", "input 0 requires grad", "no_grad"});
}

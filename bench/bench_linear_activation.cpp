#include "bench_linear_activation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/ops/op_def.hpp"

namespace kiln::bench {
namespace {

// The two ways to compute one layer, measured in alternating rounds so that
// a change in the machine's load falls on both alike.
struct Entrants {
  std::function<void()> fused, two_ops;
};

constexpr int kRounds = 5;

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Medians over the rounds of each round's median time per call: {fused, two ops}.
std::pair<double, double> race(const Entrants& c) {
  std::vector<double> fused, two_ops;
  for (int round = 0; round < kRounds; ++round) {
    fused.push_back(median_seconds(c.fused, 0.1));
    two_ops.push_back(median_seconds(c.two_ops, 0.1));
  }
  return {median_of(fused), median_of(two_ops)};
}

// N(0, std^2) values; with grad when `requires_grad` (a parameter).
Tensor normal(Runtime& rt, const Shape& shape, double std, bool requires_grad) {
  Tensor t = rt.call1("randn", {}, {{"shape", std::vector<int64_t>(shape.begin(), shape.end())}, {"std", std}});
  t.set_requires_grad(requires_grad);
  return t;
}

}  // namespace

void bench_linear_activation(Runtime& rt) {
  std::printf("linear + activation f32: fused (linear's activation attribute) vs linear then the activation op\n");
  std::printf("  %-10s %-20s %11s %11s %8s   %14s %11s %8s\n", "activation", "[batch, in] -> out", "fused us",
              "two ops us", "speedup", "fwd+bwd fused", "two ops", "speedup");
  struct Activation {
    const char* name;  // linear's attribute
    const OpDef& op;   // the op that computes it alone
    Attrs attrs;
  };
  const OpDef& relu = rt.op("relu");
  const OpDef& gelu = rt.op("gelu");
  const Activation activations[] = {{"relu", relu, relu.default_attrs()},
                                    {"gelu_tanh", gelu, gelu.make_attrs({{"approximate", std::string("tanh")}})}};
  struct Layer {
    int64_t batch, in, out;
  };
  const Layer layers[] = {{64, 784, 256}, {512, 784, 256}, {64, 1024, 1024}, {512, 1024, 1024}};
  const OpDef& linear = rt.op("linear");
  const Attrs plain = linear.default_attrs();
  for (const Activation& a : activations) {
    const Attrs fused_attrs = linear.make_attrs({{"activation", std::string(a.name)}});
    for (const Layer& l : layers) {
      // Weights of PyTorch's scale, so that about half the outputs are negative.
      const Tensor x = normal(rt, {l.batch, l.in}, 1.0, false);
      Tensor w = normal(rt, {l.out, l.in}, 1.0 / std::sqrt(double(l.in)), true);
      Tensor b = normal(rt, {l.out}, 0.1, true);
      auto fused = [&] { return rt.call1(linear, {x, w, b}, fused_attrs); };
      auto two_ops = [&] { return rt.call1(a.op, {rt.call1(linear, {x, w, b}, plain)}, a.attrs); };
      std::pair<double, double> forward;
      {
        NoGradGuard no_grad(rt);
        forward = race({[&] { fused(); }, [&] { two_ops(); }});
      }
      const Tensor grad = rt.full({l.batch, l.out}, 1.0);
      auto step = [&](const std::function<Tensor()>& f) {
        return [&, f] {
          w.set_grad(Tensor());
          b.set_grad(Tensor());
          rt.backward(f(), grad);
        };
      };
      const std::pair<double, double> train = race({step(fused), step(two_ops)});
      const std::string shape = "[" + std::to_string(l.batch) + ", " + std::to_string(l.in) + "] -> " +
                                std::to_string(l.out);
      std::printf("  %-10s %-20s %11.1f %11.1f %7.2fx   %14.1f %11.1f %7.2fx\n", a.name, shape.c_str(),
                  forward.first * 1e6, forward.second * 1e6, forward.second / forward.first, train.first * 1e6,
                  train.second * 1e6, train.second / train.first);
    }
  }
  std::printf("\n");
}

}  // namespace kiln::bench

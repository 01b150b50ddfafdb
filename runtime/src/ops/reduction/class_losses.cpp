// Losses over class scores: cross_entropy (log-softmax and negative log
// likelihood fused in one pass, with PyTorch's ignore_index and
// label_smoothing) and nll_loss, and their backward ops.
//
// f32 cross_entropy takes its softmax from oneDNN (softmax_dnnl.cpp) over
// dense rows of classes, and from class_softmax_f32.hpp where the classes
// are strided (see softmax_of_classes).
//
// Scores are [N, C] or [N, C, d1...] with targets [N] or [N, d1...]; each
// (n, d...) position is a row of C scores at stride d1*d2*... . "mean"
// divides by the number of targets that are not ignore_index.
#include <cmath>
#include <limits>

#include "common.hpp"
#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "class_softmax_f32.hpp"
#include "softmax.hpp"

namespace kiln::reduction {
namespace {

struct ClassRows {
  int64_t count = 0;    // rows: N * d1 * d2 ...
  int64_t classes = 0;  // C
  int64_t stride = 1;   // between two classes of a row: d1 * d2 ...
  int64_t base(int64_t row) const { return (row / stride) * classes * stride + row % stride; }
};

ClassRows class_rows(const Shape& scores) {
  ClassRows r;
  r.classes = scores[1];
  for (int i = 2; i < scores.rank(); ++i) r.stride *= scores[i];
  r.count = scores[0] * r.stride;
  return r;
}

void class_loss_infer(InferCall& c) {
  check_floating(c, 0);
  check_index_dtype(c, 1);
  const Shape& scores = c.inputs[0].shape();
  const Shape& target = c.inputs[1].shape();
  KILN_CHECK(scores.rank() >= 2, Status::shape_mismatch, "op '", c.op.name, "': input must be [N, C] or [N, C, d1, ...], got ",
             to_string(scores));
  Shape expected = scores;
  expected.erase(1);
  KILN_CHECK(target == expected, Status::shape_mismatch, "op '", c.op.name, "': target has shape ", to_string(target),
             " but input ", to_string(scores), " needs a target of shape ", to_string(expected));
  if (c.op.attr_index("label_smoothing") >= 0) {
    const double eps = c.op.attr_real(c.attrs, "label_smoothing");
    KILN_CHECK(eps >= 0.0 && eps <= 1.0, Status::invalid_argument, "op '", c.op.name,
               "': label_smoothing must be in [0, 1], got ", eps);
  }
  c.outputs.push_back({loss_output_shape(parse_loss_reduction(c.op, c.attrs), target), c.inputs[0].dtype(), c.device});
}

// The class of each row (-1 for ignore_index), checked to lie in [0, C).
std::vector<int64_t> row_classes(const KernelCall& c, const Tensor& target, int64_t classes, int64_t* valid) {
  const int64_t ignore = c.op.attr_int(c.attrs, "ignore_index");
  std::vector<int64_t> out(size_t(target.numel()));
  *valid = 0;
  visit_index_dtype(target.dtype(), [&]<class I>() {
    const I* t = target.data<I>();
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t k = int64_t(t[i]);
      if (k == ignore) {
        out[i] = -1;
        continue;
      }
      KILN_CHECK(k >= 0 && k < classes, Status::invalid_argument, "op '", c.op.name, "': target ", k,
                 " at position ", i, " is out of range for ", classes, " classes (expected 0 <= target < ", classes,
                 " or ignore_index ", ignore, ")");
      out[i] = k;
      ++*valid;
    }
  });
  return out;
}

// Row losses from row_loss(x, base, stride, class), reduced as the op says.
template <class T, class RowLoss>
void class_loss_forward(const KernelCall& c, RowLoss row_loss) {
  const ClassRows r = class_rows(c.inputs[0].shape());
  int64_t valid = 0;
  const std::vector<int64_t> cls = row_classes(c, c.inputs[1], r.classes, &valid);
  const T* x = c.inputs[0].data<T>();
  using A = acc_t<T>;
  std::vector<A> losses(size_t(r.count), A(0));
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, r.classes));
  c.runtime.thread_pool().parallel_for(r.count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (cls[size_t(i)] >= 0) losses[size_t(i)] = row_loss(x, r.base(i), r.stride, r.classes, cls[size_t(i)]);
  });
  T* out = c.outputs[0].data<T>();
  const LossReduction red = parse_loss_reduction(c.op, c.attrs);
  if (red == LossReduction::none) {
    for (size_t i = 0; i < losses.size(); ++i) out[i] = store_acc<T>(losses[i]);
    return;
  }
  A total = 0;
  for (A l : losses) total += l;  // serial: the same sum on every run
  out[0] = store_acc<T>(red == LossReduction::mean ? total / A(valid) : total);
}

// Row i's share of the output gradient gy.
template <class T>
acc_t<T> row_scale(const T* gy, LossReduction red, int64_t valid, int64_t i) {
  const acc_t<T> scale = load_acc(gy[red == LossReduction::none ? i : 0]);
  return red == LossReduction::mean ? scale / acc_t<T>(valid) : scale;
}

// Zeros, then row_grad(x, gx, base, stride, class, scale) for every row that
// is not ignored; scale is that row's share of the output gradient.
template <class T, class RowGrad>
void class_loss_backward(const KernelCall& c, RowGrad row_grad) {
  const Tensor& g = c.inputs[0];
  const ClassRows r = class_rows(c.inputs[1].shape());
  int64_t valid = 0;
  const std::vector<int64_t> cls = row_classes(c, c.inputs[2], r.classes, &valid);
  const T* gy = g.data<T>();
  const T* x = c.inputs[1].data<T>();
  T* gx = c.outputs[0].data<T>();
  using A = acc_t<T>;
  const LossReduction red = parse_loss_reduction(c.op, c.attrs);
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, r.classes));
  c.runtime.thread_pool().parallel_for(r.count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t base = r.base(i);
      for (int64_t k = 0; k < r.classes; ++k) gx[base + k * r.stride] = store_acc<T>(A(0));
      if (cls[size_t(i)] < 0) continue;
      row_grad(x, gx, base, r.stride, r.classes, cls[size_t(i)], row_scale<T>(gy, red, valid, i));
    }
  });
}

// Max and log-sum-exp of a row, shifted by the max so exp() cannot overflow.
template <class T>
std::pair<acc_t<T>, acc_t<T>> row_max_lse(const T* x, int64_t base, int64_t stride, int64_t classes) {
  using A = acc_t<T>;
  A m = -std::numeric_limits<A>::infinity();
  for (int64_t k = 0; k < classes; ++k) m = std::max(m, load_acc(x[base + k * stride]));
  A s = 0;
  for (int64_t k = 0; k < classes; ++k) s += std::exp(load_acc(x[base + k * stride]) - m);
  return {m, m + std::log(s)};
}

// loss = (1 - eps) * -log p_t + eps * mean_c(-log p_c)
//      = lse - (1 - eps) x_t - eps / C * sum_c x_c
template <class T>
void cross_entropy_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const A eps = A(c.op.attr_real(c.attrs, "label_smoothing"));
  class_loss_forward<T>(c, [eps](const T* x, int64_t base, int64_t stride, int64_t classes, int64_t t) {
    const A lse = row_max_lse(x, base, stride, classes).second;
    A sum_x = 0;
    if (eps != A(0))
      for (int64_t k = 0; k < classes; ++k) sum_x += load_acc(x[base + k * stride]);
    return lse - (1 - eps) * load_acc(x[base + t * stride]) - eps / A(classes) * sum_x;
  });
}

// d loss / d x_c = softmax_c - (1 - eps) [c == t] - eps / C
template <class T>
void cross_entropy_backward_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const A eps = A(c.op.attr_real(c.attrs, "label_smoothing"));
  class_loss_backward<T>(c, [eps](const T* x, T* gx, int64_t base, int64_t stride, int64_t classes, int64_t t, A scale) {
    const A lse = row_max_lse(x, base, stride, classes).second;
    for (int64_t k = 0; k < classes; ++k) {
      const int64_t i = base + k * stride;
      const A target = (k == t ? 1 - eps : A(0)) + eps / A(classes);
      gx[i] = store_acc<T>(scale * (std::exp(load_acc(x[i]) - lse) - target));
    }
  });
}

// f32 scores [N, C] go through oneDNN's softmax, whose exp runs in the
// CPU's widest vectors, over their dense rows of C classes; scores [N, C,
// d...] (a sequence model's [B, V, T], say), whose classes lie d1 * d2 ...
// apart, through kiln's softmax along the classes with vectors along d
// (class_softmax_f32.hpp). Either way the (log-)probabilities come out in
// the layout of the scores.
template <bool Log>
void softmax_of_classes(Runtime& rt, const ClassRows& r, const float* x, float* out) {
  if (r.count == 0) return;
  if (r.stride == 1) return dnnl_softmax_rows<Log>(rt, SoftmaxRows{r.count, r.classes, 1}, x, out);
  class_softmax_f32(rt, x, r.count / r.stride, r.classes, r.stride, Log, out);
}

void cross_entropy_f32_kernel(const KernelCall& c) {
  const float eps = float(c.op.attr_real(c.attrs, "label_smoothing"));
  const ClassRows r = class_rows(c.inputs[0].shape());
  const Tensor log_p = c.runtime.empty(c.inputs[0].shape(), DType::f32);
  softmax_of_classes<true>(c.runtime, r, c.inputs[0].data<float>(), log_p.data<float>());
  const float* lp = log_p.data<float>();
  class_loss_forward<float>(c, [eps, lp](const float*, int64_t base, int64_t stride, int64_t classes, int64_t t) {
    float sum_lp = 0;
    if (eps != 0.0f)
      for (int64_t k = 0; k < classes; ++k) sum_lp += lp[base + k * stride];
    return -(1 - eps) * lp[base + t * stride] - eps / float(classes) * sum_lp;
  });
}

// d loss / d x_c = scale * (softmax_c - (1 - eps) [c == t] - eps / C), the
// softmax written into the gradient first.
void cross_entropy_backward_f32_kernel(const KernelCall& c) {
  const float eps = float(c.op.attr_real(c.attrs, "label_smoothing"));
  const ClassRows r = class_rows(c.inputs[1].shape());
  int64_t valid = 0;
  const std::vector<int64_t> cls = row_classes(c, c.inputs[2], r.classes, &valid);
  float* gx = c.outputs[0].data<float>();
  softmax_of_classes<false>(c.runtime, r, c.inputs[1].data<float>(), gx);
  const float* gy = c.inputs[0].data<float>();
  const LossReduction red = parse_loss_reduction(c.op, c.attrs);
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, r.classes));
  c.runtime.thread_pool().parallel_for(r.count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t base = r.base(i), t = cls[size_t(i)];
      if (t < 0) {  // ignored: no gradient, whatever its scores
        for (int64_t k = 0; k < r.classes; ++k) gx[base + k * r.stride] = 0.0f;
        continue;
      }
      const float scale = row_scale(gy, red, valid, i);
      for (int64_t k = 0; k < r.classes; ++k) {
        float& g = gx[base + k * r.stride];
        g = scale * (g - eps / float(r.classes));
      }
      gx[base + t * r.stride] -= scale * (1 - eps);
    }
  });
}

template <class T>
void nll_loss_kernel(const KernelCall& c) {
  class_loss_forward<T>(c, [](const T* x, int64_t base, int64_t stride, int64_t, int64_t t) {
    return -load_acc(x[base + t * stride]);
  });
}

template <class T>
void nll_loss_backward_kernel(const KernelCall& c) {
  class_loss_backward<T>(c, [](const T*, T* gx, int64_t base, int64_t stride, int64_t, int64_t t, acc_t<T> scale) {
    gx[base + t * stride] = store_acc<T>(-scale);
  });
}

void class_loss_backward_infer(InferCall& c) {
  c.outputs.push_back({c.inputs[1].shape(), c.inputs[1].dtype(), c.device});
}

// The backward op takes (grad, scores, target) and the forward's attributes.
template <bool CrossEntropy>
std::vector<Tensor> class_loss_backward_fn(const BackwardCall& c) {
  const OpDef& op = c.runtime.op(CrossEntropy ? "cross_entropy_backward" : "nll_loss_backward");
  const std::vector<Tensor> args{c.grad_outputs[0], c.inputs[0], c.inputs[1]};
  return {c.runtime.call1(op, args, c.attrs), Tensor()};
}

// forward and backward are []<class T>() { return &some_kernel<T>; }.
template <bool CrossEntropy, class MakeForward, class MakeBackward>
void add_class_loss(OpRegistry& r, const std::string& name, MakeForward forward, MakeBackward backward,
                    std::vector<AttrSpec> attrs) {
  OpDef op;
  op.name = name;
  op.inputs = {{"input"}, {"target"}};
  op.attrs = attrs;
  op.infer = class_loss_infer;
  op.backward = class_loss_backward_fn<CrossEntropy>;
  op.saves_outputs = false;
  op.precision = PrecisionCategory::f32;
  set_float_kernels(op, forward);
  r.add(std::move(op));

  OpDef grad;
  grad.name = name + "_backward";
  grad.inputs = {{"grad"}, {"input"}, {"target"}};
  grad.attrs = std::move(attrs);  // the forward's, passed through unchanged
  grad.infer = class_loss_backward_infer;
  set_float_kernels(grad, backward);
  r.add(std::move(grad));
}

}  // namespace

void register_class_loss_ops(OpRegistry& r) {
  add_class_loss<true>(
      r, "cross_entropy", []<class T>() -> KernelFn {
        if constexpr (std::is_same_v<T, float>) return &cross_entropy_f32_kernel;
        else return &cross_entropy_kernel<T>;
      },
      []<class T>() -> KernelFn {
        if constexpr (std::is_same_v<T, float>) return &cross_entropy_backward_f32_kernel;
        else return &cross_entropy_backward_kernel<T>;
      },
      {attr_int("ignore_index", -100), attr_real("label_smoothing", 0.0), attr_string("reduction", "mean")});
  add_class_loss<false>(
      r, "nll_loss", []<class T>() { return &nll_loss_kernel<T>; }, []<class T>() { return &nll_loss_backward_kernel<T>; },
      {attr_int("ignore_index", -100), attr_string("reduction", "mean")});
}

}  // namespace kiln::reduction

// The CPU loops of the binary element-wise ops: out[i] = fn(a[.], b[.]) with
// NumPy broadcasting, operands in any layout. Equal dense shapes and a
// one-element operand take flat loops the compiler vectorises; everything
// else walks broadcast strides. Small tensors run inline with no allocation,
// since `add` on tiny tensors sits on the autograd accumulation path.
//
// fn takes two math_t<T> values and returns a math_t<T> (stored as T) or,
// for comparisons and logical functions, a bool (stored as it is).
#pragma once

#include "elementwise_common.hpp"

namespace kiln::elementwise {

template <class Out, class T, class V>
inline Out store_result(V v) {
  if constexpr (std::is_same_v<V, bool>) return v;
  else return store_math<T>(v);
}

// out[i] = fn(in[i], s) over a dense input: the loop shared by a one-element
// operand of a binary op and by the *_scalar ops. `scalar_first` swaps the
// operands (a one-element left operand of sub or div).
template <class T, class Out, bool scalar_first, class Fn>
void scalar_loop(Runtime& rt, const T* in, math_t<T> s, Out* out, int64_t n, Fn fn) {
  for_range(rt, n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const math_t<T> x = load_math(in[i]);
      out[i] = store_result<Out, T>(scalar_first ? fn(s, x) : fn(x, s));
    }
  });
}

// out = fn(a, b); out is contiguous, shaped like the broadcast of a and b.
template <class T, class Out, class Fn>
void binary_map(Runtime& rt, const Tensor& a, const Tensor& b, Tensor& out, Fn fn) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  Out* po = out.data<Out>();
  const int64_t n = out.numel();
  // Equal element counts and dense layouts put operands and output in the
  // same row-major order, whatever leading 1s the shapes carry.
  const bool a_dense = a.numel() == n && a.is_contiguous();
  const bool b_dense = b.numel() == n && b.is_contiguous();
  if (a_dense && b_dense) {
    for_range(rt, n, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = store_result<Out, T>(fn(load_math(pa[i]), load_math(pb[i])));
    });
  } else if (a_dense && b.numel() == 1) {
    scalar_loop<T, Out, false>(rt, pa, load_math(pb[0]), po, n, fn);
  } else if (b_dense && a.numel() == 1) {
    scalar_loop<T, Out, true>(rt, pb, load_math(pa[0]), po, n, fn);
  } else {
    const Shape& shape = out.shape();
    const std::array<Shape, 2> strides{cpu::broadcast_strides(a.shape(), a.strides(), shape),
                                       cpu::broadcast_strides(b.shape(), b.strides(), shape)};
    for_range(rt, n, [&](int64_t begin, int64_t end) {
      for_each_offsets<2>(shape, strides, begin, end, [&](int64_t i, const std::array<int64_t, 2>& off) {
        po[i] = store_result<Out, T>(fn(load_math(pa[off[0]]), load_math(pb[off[1]])));
      });
    });
  }
}

// The kernel of a binary op whose function needs no state: inputs a and b,
// output 0.
template <class T, class Out, class Fn>
void binary_kernel(const KernelCall& c) {
  binary_map<T, Out>(c.runtime, c.inputs[0], c.inputs[1], c.outputs[0], Fn{});
}

// The shape of the broadcast of inputs 0 and 1, which share a dtype.
inline Shape binary_shape(const InferCall& c) {
  check_same_dtype(c);
  return broadcast_shapes(c.inputs[0].shape(), c.inputs[1].shape(), c.op.name.c_str());
}

// A binary op giving bool (a comparison, a logical function): inputs a and b
// of one dtype, any of them, broadcast together; no gradient.
template <class Fn>
OpDef bool_binary_op(std::string name) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"a"}, {"b"}};
  op.infer = [](InferCall& c) { c.outputs.push_back({binary_shape(c), DType::boolean, c.device}); };
  op.accepts_strided = true;
  set_cpu_kernels(op, AllTypes{}, []<class T>() -> KernelFn { return binary_kernel<T, bool, Fn>; });
  return op;
}

}  // namespace kiln::elementwise

// CPU kernels of the fused optimizer updates: the elements of all the
// call's tensors, taken as one range, are split over the thread pool, so a
// call with many small tensors and one with a single large one both use
// every worker. Each worker applies the rule to 16 bytes of lanes at a time
// (GCC vector extensions, which need no target flags), then to the tail
// element by element; lanes compute exactly what single elements do.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/runtime.hpp"
#include "optim_ops.hpp"
#include "update_rules.hpp"

namespace kiln::optim {
namespace {

// 16 bytes of S: four floats or two doubles.
typedef float FloatLanes __attribute__((vector_size(16)));
typedef double DoubleLanes __attribute__((vector_size(16)));
template <class S>
using Lanes = std::conditional_t<std::is_same_v<S, double>, DoubleLanes, FloatLanes>;
template <class S>
inline constexpr int kLanes = int(16 / sizeof(S));

template <class V>
V lane_roots(V x) {
  for (size_t i = 0; i < sizeof x / sizeof x[0]; ++i) x[i] = std::sqrt(x[i]);
  return x;
}

}  // namespace

// The rules take their square roots here for lanes.
template <>
inline FloatLanes square_root(FloatLanes x) { return lane_roots(x); }
template <>
inline DoubleLanes square_root(DoubleLanes x) { return lane_roots(x); }

namespace {

// Applies the rule to the elements at `e` of `data` (one tensor per list),
// carried as V: one S, or a group of lanes. Memory that holds S itself is
// copied in and out whole.
template <class V, class T, int L, class Rule>
void update_at(T* const (&data)[L], int64_t e, const Rule& rule) {
  using S = acc_t<T>;
  constexpr int W = int(sizeof(V) / sizeof(S));
  V v[L];
  for (int k = 0; k < L; ++k) {
    if constexpr (std::is_same_v<T, S>) {
      std::memcpy(&v[k], data[k] + e, sizeof(V));
    } else if constexpr (W == 1) {
      v[k] = load_acc(data[k][e]);
    } else {  // widened lane by lane, then moved in whole
      S lanes[W];
      for (int j = 0; j < W; ++j) lanes[j] = load_acc(data[k][e + j]);
      std::memcpy(&v[k], lanes, sizeof(V));
    }
  }
  rule(v);
  for (int k = 0; k < L; ++k) {
    if (k == 1) continue;  // list 1 is the gradient: read only
    if constexpr (std::is_same_v<T, S>) std::memcpy(data[k] + e, &v[k], sizeof(V));
    else if constexpr (W == 1) data[k][e] = store_acc<T>(v[k]);
    else for (int j = 0; j < W; ++j) data[k][e + j] = store_acc<T>(v[k][j]);
  }
}

// Elements [first, last) of the tensors `data`: lane groups while whole
// ones remain, then one by one.
template <class T, int L, class Rule>
void update_range(T* const (&data)[L], int64_t first, int64_t last, const Rule& rule) {
  using S = acc_t<T>;
  int64_t e = first;
  for (; e + kLanes<S> <= last; e += kLanes<S>) update_at<Lanes<S>>(data, e, rule);
  for (; e < last; ++e) update_at<S>(data, e, rule);
}

template <class T, class Rule>
void update_all(const KernelCall& c, const Rule& rule) {
  constexpr int L = Rule::kLists;
  const size_t n = c.inputs.size() / L;
  std::vector<int64_t> start(n + 1, 0);  // tensor i holds elements [start[i], start[i + 1]) of the range
  for (size_t i = 0; i < n; ++i) start[i + 1] = start[i] + c.inputs[i].numel();
  c.runtime.thread_pool().parallel_for(start[n], cpu::kElementGrain, [&](int64_t begin, int64_t end) {
    size_t t = size_t(std::upper_bound(start.begin(), start.end(), begin) - start.begin()) - 1;
    for (; t < n && start[t] < end; ++t) {
      T* data[L];
      for (int k = 0; k < L; ++k) data[k] = list_entry(c.inputs, L, k, t).template data<T>();
      update_range<T, L>(data, std::max(begin, start[t]) - start[t], std::min(end, start[t + 1]) - start[t], rule);
    }
  });
}

template <class T>
void sgd_kernel(const KernelCall& c) {
  if (c.op.attr_real(c.attrs, "momentum") != 0) update_all<T>(c, sgd_rule<acc_t<T>, true>(c.op, c.attrs));
  else update_all<T>(c, sgd_rule<acc_t<T>, false>(c.op, c.attrs));
}

template <class T>
void adam_kernel(const KernelCall& c) {
  if (c.op.attr_bool(c.attrs, "amsgrad")) update_all<T>(c, adam_rule<acc_t<T>, true>(c.op, c.attrs));
  else update_all<T>(c, adam_rule<acc_t<T>, false>(c.op, c.attrs));
}

template <class... T>
void set_cpu_kernels(OpRegistry& r) {
  (r.set_kernel("sgd_update", DeviceType::cpu, dtype_of<T>::value, &sgd_kernel<T>), ...);
  (r.set_kernel("adam_update", DeviceType::cpu, dtype_of<T>::value, &adam_kernel<T>), ...);
}

}  // namespace

void register_cpu_kernels(OpRegistry& r) { set_cpu_kernels<float, double, Half, BFloat16>(r); }

}  // namespace kiln::optim

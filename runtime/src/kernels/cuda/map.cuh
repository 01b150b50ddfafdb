// Element-wise maps on a GPU: out[i] = f(in_0[i], in_1[i], ...) for every
// element of a contiguous output, with the inputs in any layout and
// broadcast to the output's shape. Dense inputs take a flat grid-stride loop
// that moves 16 bytes per operand at a time when every pointer allows it;
// anything else walks broadcast strides. Indices are 64-bit throughout.
// `f` is a functor with a __device__ const call operator taking and
// returning element (storage) types.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/tensor.hpp"
#include "launch.cuh"
#include "stream.hpp"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln::cuda {

// Maps a row-major output index to each operand's element offset.
template <int N>
struct OffsetMap {
  int rank;
  int64_t sizes[kMaxDims];
  int64_t strides[N > 0 ? N : 1][kMaxDims];  // in elements; 0 along broadcast dims

  __device__ void offsets(int64_t i, int64_t (&off)[N > 0 ? N : 1]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t index = i % sizes[d];
      i /= sizes[d];
      for (int k = 0; k < N; ++k) off[k] += index * strides[k][d];
    }
  }
};

// V elements moved as one aligned load or store.
template <class T, int V>
struct alignas(sizeof(T) * V) Packet {
  T v[V];
};

template <int V, class Out, class F, class... P>
__device__ inline void apply_packets(Packet<Out, V>& out, const F& f, const P&... in) {
#pragma unroll
  for (int k = 0; k < V; ++k) out.v[k] = f(in.v[k]...);
}

// V = 1 is the plain loop; larger V reads packets, then finishes the tail
// element by element.
template <int V, class F, class Out, class... In>
__global__ void map_dense(int64_t n, F f, Out* out, const In*... in) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t packets = n / V;
  if constexpr (V > 1) {
    for (int64_t p = first; p < packets; p += step) {
      Packet<Out, V> result;
      apply_packets<V>(result, f, reinterpret_cast<const Packet<In, V>*>(in)[p]...);
      reinterpret_cast<Packet<Out, V>*>(out)[p] = result;
    }
  }
  for (int64_t i = packets * V + first; i < n; i += step) out[i] = f(in[i]...);
}

template <class F, class Out, class... In, size_t... K>
__device__ inline Out apply_at(const F& f, const int64_t* off, std::index_sequence<K...>, const In*... in) {
  return f(in[off[K]]...);
}

template <class F, class Out, class... In>
__global__ void map_strided(int64_t n, F f, Out* out, OffsetMap<sizeof...(In)> map, const In*... in) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[sizeof...(In) > 0 ? sizeof...(In) : 1];
    map.offsets(i, off);
    out[i] = apply_at<F, Out>(f, off, std::index_sequence_for<In...>{}, in...);
  }
}

template <class... T>
inline constexpr size_t kWidest = std::max({sizeof(T)...});

// Elements per 16-byte packet of the widest operand.
template <class... T>
inline constexpr int kPacketElements = int(16 / kWidest<T...>);

inline bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// Map<Out, In...>::run(what, out, f, in...) runs out = f(in...) on out's
// device; Out and In are the element types of the tensors.
template <class Out, class... In>
struct Map {
  // Any layouts, broadcast to out's shape.
  template <class F, class... Inputs>
  static void run(const char* what, Tensor& out, const F& f, const Inputs&... in) {
    static_assert(sizeof...(Inputs) == sizeof...(In), "one tensor per input element type");
    const int64_t n = out.numel();
    if (((in.numel() == n && in.is_contiguous()) && ...)) return run_dense(what, out, f, in...);
    run_mapped(what, out, f, offset_map(out.shape(), in...), in...);
  }

  // Input k's element for output element i at map's offsets(i)[k].
  template <class F, class... Inputs>
  static void run_mapped(const char* what, Tensor& out, const F& f, const OffsetMap<sizeof...(In)>& map,
                         const Inputs&... in) {
    const int64_t n = out.numel();
    if (n == 0) return;
    const int device = out.device().index;
    CudaDeviceGuard guard(device);
    map_strided<<<grid_size(n), kBlockSize, 0, compute_stream(device)>>>(n, f, out.data<Out>(), map,
                                                                         in.template data<In>()...);
    KILN_CUDA_CHECK_LAUNCH(what, " for ", describe(out));
  }

  // Inputs contiguous with out's element count (ops without broadcasting
  // that take their inputs contiguous); only the flat loops are compiled.
  template <class F, class... Inputs>
  static void run_dense(const char* what, Tensor& out, const F& f, const Inputs&... in) {
    static_assert(sizeof...(Inputs) == sizeof...(In), "one tensor per input element type");
    const int64_t n = out.numel();
    if (n == 0) return;
    const int device = out.device().index;
    CudaDeviceGuard guard(device);
    const cudaStream_t stream = compute_stream(device);
    Out* dst = out.data<Out>();
    constexpr int V = kPacketElements<Out, In...>;
    const bool packed =
        n >= V && aligned_to(dst, sizeof(Packet<Out, V>)) && (aligned_to(in.raw_data(), sizeof(Packet<In, V>)) && ...);
    if (packed)
      map_dense<V><<<grid_size(n / V), kBlockSize, 0, stream>>>(n, f, dst, in.template data<In>()...);
    else
      map_dense<1><<<grid_size(n), kBlockSize, 0, stream>>>(n, f, dst, in.template data<In>()...);
    KILN_CUDA_CHECK_LAUNCH(what, " for ", describe(out));
  }

  template <class... Inputs>
  static OffsetMap<sizeof...(In)> offset_map(const Shape& shape, const Inputs&... in) {
    OffsetMap<sizeof...(In)> m{};
    m.rank = shape.rank();
    for (int d = 0; d < m.rank; ++d) m.sizes[d] = shape[d];
    int k = 0;
    const auto add = [&](const Tensor& t) {
      const Shape strides = cpu::broadcast_strides(t.shape(), t.strides(), shape);
      for (int d = 0; d < m.rank; ++d) m.strides[k][d] = strides[d];
      ++k;
    };
    (add(in), ...);
    return m;
  }
};

// f(i) for every i < n.
template <class F>
__global__ void for_each_index(int64_t n, F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) f(i);
}

// Runs f over [0, n) on the device of `on`: for kernels whose writes are not
// one element per index (scatters, block copies).
template <class F>
void run_for_each(const char* what, const Tensor& on, int64_t n, const F& f) {
  if (n == 0) return;
  const int device = on.device().index;
  CudaDeviceGuard guard(device);
  for_each_index<<<grid_size(n), kBlockSize, 0, compute_stream(device)>>>(n, f);
  KILN_CUDA_CHECK_LAUNCH(what, " for ", describe(on));
}

template <class Out, class F>
struct StoreAt {
  F f;
  Out* out;
  __device__ void operator()(int64_t i) const { out[i] = f(i); }
};

// out[i] = f(i): elements computed from their index alone (arange, gathers).
template <class Out, class F>
void run_index_map(const char* what, Tensor& out, const F& f) {
  run_for_each(what, out, out.numel(), StoreAt<Out, F>{f, out.data<Out>()});
}

}  // namespace kiln::cuda

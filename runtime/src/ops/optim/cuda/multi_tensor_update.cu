// CUDA kernels of the fused optimizer updates, applied to many tensors per
// launch: plan_multi_tensor packs (tensor, chunk) pairs into launches, and
// each launch's metadata travels as the kernel's arguments. A block updates
// one chunk, 16 bytes per list at a time where all of its tensor's lists are
// aligned (chunks start at multiples of the packet width), element by
// element for the rest. f16 and bf16 compute in f32.
#include <algorithm>
#include <vector>

#include "../../../kernels/cuda/element.cuh"
#include "../../../kernels/cuda/launch.cuh"
#include "../../../kernels/cuda/map.cuh"
#include "../../../kernels/cuda/stream.hpp"
#include "../../../memory/cuda/device_guard.hpp"
#include "../optim_ops.hpp"
#include "../update_rules.hpp"
#include "kiln/ops/multi_tensor_plan.hpp"

namespace kiln::optim {
namespace {

constexpr int kThreads = 512;

// One launch's tensors: the address of each list's entry, the element
// count, and for every block its tensor slot and chunk.
template <int Lists>
struct LaunchArgs {
  static constexpr int kMaxTensors = multi_tensor_max_tensors(Lists);
  void* address[Lists][kMaxTensors];
  int64_t numel[kMaxTensors];
  int32_t block_chunk[kMultiTensorMaxBlocks];
  uint8_t block_slot[kMultiTensorMaxBlocks];
};

template <class T, int Lists>
__device__ inline void update_one(T* const (&data)[Lists], int64_t e, const auto& rule) {
  using M = cuda::math_t<T>;
  M v[Lists];
#pragma unroll
  for (int k = 0; k < Lists; ++k) v[k] = cuda::to_math(data[k][e]);
  rule(v);
#pragma unroll
  for (int k = 0; k < Lists; ++k)
    if (k != 1) data[k][e] = cuda::from_math<T>(v[k]);  // list 1 is the gradient: read only
}

template <class T, class Rule>
__global__ void __launch_bounds__(kThreads) multi_tensor_update(LaunchArgs<Rule::kLists> args, Rule rule) {
  constexpr int L = Rule::kLists;
  constexpr int V = 16 / int(sizeof(T));
  using M = cuda::math_t<T>;
  using P = cuda::Packet<T, V>;
  const int slot = args.block_slot[blockIdx.x];
  const int64_t begin = int64_t(args.block_chunk[blockIdx.x]) * kMultiTensorChunk;
  const int64_t chunk_end = begin + kMultiTensorChunk;
  const int64_t end = args.numel[slot] < chunk_end ? args.numel[slot] : chunk_end;
  T* data[L];
  uintptr_t addresses = 0;
#pragma unroll
  for (int k = 0; k < L; ++k) {
    data[k] = static_cast<T*>(args.address[k][slot]);
    addresses |= reinterpret_cast<uintptr_t>(data[k]);
  }
  int64_t tail = begin;
  if (addresses % sizeof(P) == 0) {
    const int64_t packets = (end - begin) / V;
    for (int64_t p = threadIdx.x; p < packets; p += kThreads) {
      P packet[L];
#pragma unroll
      for (int k = 0; k < L; ++k) packet[k] = reinterpret_cast<const P*>(data[k] + begin)[p];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        M v[L];
#pragma unroll
        for (int k = 0; k < L; ++k) v[k] = cuda::to_math(packet[k].v[j]);
        rule(v);
#pragma unroll
        for (int k = 0; k < L; ++k) packet[k].v[j] = cuda::from_math<T>(v[k]);
      }
#pragma unroll
      for (int k = 0; k < L; ++k)
        if (k != 1) reinterpret_cast<P*>(data[k] + begin)[p] = packet[k];
    }
    tail = begin + packets * V;
  }
  for (int64_t e = tail + threadIdx.x; e < end; e += kThreads) update_one<T, L>(data, e, rule);
}

template <class T, class Rule>
void launch_all(const KernelCall& c, const Rule& rule) {
  constexpr int L = Rule::kLists;
  static_assert(sizeof(LaunchArgs<L>) + sizeof(Rule) <= kMultiTensorArgBytes,
                "a launch's arguments must stay within the kernel-argument limit");
  static_assert(sizeof(Rule) <= kMultiTensorHyperBytes, "the rule outgrew the space kept for it");
  const size_t n = c.inputs.size() / L;
  std::vector<int64_t> numels(n);
  for (size_t i = 0; i < n; ++i) numels[i] = c.inputs[i].numel();
  const MultiTensorLimits limits{LaunchArgs<L>::kMaxTensors, kMultiTensorMaxBlocks, kMultiTensorChunk};
  const int device = c.inputs[0].device().index;
  CudaDeviceGuard guard(device);
  const cudaStream_t stream = cuda::compute_stream(device);
  for (const MultiTensorLaunch& launch : plan_multi_tensor(numels, limits)) {
    LaunchArgs<L> args;
    for (size_t s = 0; s < launch.tensors.size(); ++s) {
      const size_t t = launch.tensors[s];
      for (int k = 0; k < L; ++k) args.address[k][s] = list_entry(c.inputs, L, k, t).raw_data();
      args.numel[s] = numels[t];
    }
    for (size_t b = 0; b < launch.blocks.size(); ++b) {
      args.block_slot[b] = uint8_t(launch.blocks[b].slot);
      args.block_chunk[b] = launch.blocks[b].chunk;
    }
    multi_tensor_update<T><<<unsigned(launch.blocks.size()), kThreads, 0, stream>>>(args, rule);
    KILN_CUDA_CHECK_LAUNCH(c.op.name, " on ", launch.tensors.size(), " tensors of ", describe(c.inputs[0]));
  }
}

struct SgdKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    using M = cuda::math_t<T>;
    if (c.op.attr_real(c.attrs, "momentum") != 0) launch_all<T>(c, sgd_rule<M, true>(c.op, c.attrs));
    else launch_all<T>(c, sgd_rule<M, false>(c.op, c.attrs));
  }
};

struct AdamKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    using M = cuda::math_t<T>;
    if (c.op.attr_bool(c.attrs, "amsgrad")) launch_all<T>(c, adam_rule<M, true>(c.op, c.attrs));
    else launch_all<T>(c, adam_rule<M, false>(c.op, c.attrs));
  }
};

}  // namespace

void register_cuda_kernels(OpRegistry& r) {
  cuda::set_kernels<SgdKernels>(r, "sgd_update", cuda::FloatTypes{});
  cuda::set_kernels<AdamKernels>(r, "adam_update", cuda::FloatTypes{});
}

}  // namespace kiln::optim

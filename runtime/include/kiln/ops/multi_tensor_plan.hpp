// The host side of multi-tensor kernels (fused optimizer updates on a GPU):
// every tensor of a call is cut into fixed-size chunks, one GPU block per
// chunk, and the (tensor, chunk) pairs are packed into as few launches as
// the kernel-argument space allows. A launch's metadata (the tensors'
// addresses and sizes, and each block's tensor and chunk) travels as the
// kernel's arguments, so one launch updates many tensors without a copy to
// the device. Independent of CUDA, so that it is tested on any machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln {

// Elements per chunk: a multiple of every packet width (16 bytes of any
// element type), so chunks start aligned where their tensor does.
inline constexpr int64_t kMultiTensorChunk = 65536;
// Blocks per launch, and the kernel-argument bytes its metadata and the
// update's own arguments may take (CUDA's classic 4 KB limit, kept with a
// margin for the update's hyper-parameters).
inline constexpr int kMultiTensorMaxBlocks = 320;
inline constexpr size_t kMultiTensorArgBytes = 4096;
inline constexpr size_t kMultiTensorHyperBytes = 256;

// How many tensors one launch may carry when each has `depth` lists (a
// parameter, its gradient and its state tensors): what is left of the
// argument space after the per-block entries (an int32 chunk and a uint8
// tensor slot each), at one address per list and one element count per
// tensor.
constexpr int multi_tensor_max_tensors(int depth) {
  const size_t per_tensor = sizeof(void*) * size_t(depth) + sizeof(int64_t);
  const size_t per_blocks = size_t(kMultiTensorMaxBlocks) * (sizeof(int32_t) + sizeof(uint8_t));
  const size_t n = (kMultiTensorArgBytes - kMultiTensorHyperBytes - per_blocks) / per_tensor;
  return int(n < 255 ? n : 255);  // a block names its tensor in a uint8
}

struct MultiTensorLimits {
  int max_tensors = 0;  // tensors per launch
  int max_blocks = kMultiTensorMaxBlocks;
  int64_t chunk = kMultiTensorChunk;  // elements per block
};

// One block's work: chunk `chunk` of the launch's tensor `slot`.
struct MultiTensorBlock {
  int slot;
  int32_t chunk;
};

struct MultiTensorLaunch {
  std::vector<size_t> tensors;  // the caller's indices; a block's slot indexes this
  std::vector<MultiTensorBlock> blocks;
};

// Launches covering every chunk of every tensor (`numels`, in the caller's
// order) exactly once; tensors without elements get none. A tensor whose
// chunks do not all fit in one launch continues in the next.
std::vector<MultiTensorLaunch> plan_multi_tensor(std::span<const int64_t> numels, const MultiTensorLimits& limits);

}  // namespace kiln

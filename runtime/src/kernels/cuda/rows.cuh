// Row folds on a GPU: a reduction, softmax, norm or loss seen as rows of
// elements, each row folded into one result. A row is either folded by a
// whole block (long rows, or few of them) or by one thread (many short
// rows); kernels are written once against a Team and work both ways. The
// combine order is fixed, so results do not vary from run to run.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kiln/shape.hpp"
#include "launch.cuh"
#include "stream.hpp"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln::cuda {

// Every lane of the warp gets the fold of all 32 values.
template <class A, class Op>
__device__ inline A warp_all_reduce(A v, Op op) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, mask));
  return v;
}

// Every thread of the block gets the fold of all its threads' values
// (blockDim.x a multiple of 32). Safe to call several times in a row.
template <class A, class Op>
__device__ inline A block_all_reduce(A v, Op op) {
  __shared__ A per_warp[32];
  v = warp_all_reduce(v, op);
  __syncthreads();  // the previous call's readers are done with per_warp
  if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = v;
  __syncthreads();
  A total = per_warp[0];
  for (unsigned w = 1; w < blockDim.x / 32; ++w) total = op(total, per_warp[w]);
  return total;
}

// The threads folding one row: lane strides over the row by size.
struct Team {
  int lane;
  int size;

  template <class A, class Op>
  __device__ A all_reduce(A v, Op op) const {
    return size > 1 ? block_all_reduce(v, op) : v;
  }

  // op folded over load(k) for k < length, starting from init; every lane
  // gets the result.
  template <class A, class Op, class Load>
  __device__ A fold(int64_t length, A init, Op op, Load load) const {
    A v = init;
    for (int64_t k = lane; k < length; k += size) v = op(v, load(k));
    return all_reduce(v, op);
  }
};

struct Plus {
  template <class A> __device__ A operator()(A a, A b) const { return a + b; }
};

// The larger, as std::max (a NaN second operand loses).
struct Larger {
  template <class A> __device__ A operator()(A a, A b) const { return a < b ? b : a; }
};

// The larger, a NaN winning (as torch.amax).
struct MaxOrNan {
  template <class A> __device__ A operator()(A a, A b) const { return a != a ? a : (b > a || b != b) ? b : a; }
};

// The smaller, a NaN winning (as torch.amin).
struct MinOrNan {
  template <class A> __device__ A operator()(A a, A b) const { return a != a ? a : (b < a || b != b) ? b : a; }
};

// The smaller, as std::min.
struct Smaller {
  template <class A> __device__ A operator()(A a, A b) const { return b < a ? b : a; }
};

struct Times {
  template <class A> __device__ A operator()(A a, A b) const { return a * b; }
};

// Calls row(team, r) for every row r < rows.
template <class Row>
__global__ void fold_rows(int64_t rows, bool whole_block, Row row) {
  if (whole_block) {
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) row(Team{int(threadIdx.x), int(blockDim.x)}, r);
  } else {
    const int64_t step = int64_t(gridDim.x) * blockDim.x;
    for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += step) row(Team{0, 1}, r);
  }
}

template <class Row>
void run_rows(const char* what, int device, int64_t rows, int64_t row_length, const Row& row) {
  if (rows == 0) return;
  // A block per row keeps every thread busy when rows are long or few.
  const bool whole_block = row_length >= 512 || rows < 4096;
  CudaDeviceGuard guard(device);
  const unsigned grid = whole_block ? unsigned(std::min<int64_t>(rows, 1 << 16)) : grid_size(rows);
  fold_rows<<<grid, kBlockSize, 0, compute_stream(device)>>>(rows, whole_block, row);
  KILN_CUDA_CHECK_LAUNCH(what);
}

// Dimensions walked as one index: sizes and strides, innermost last.
struct DimWalk {
  int rank = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];

  __device__ int64_t offset(int64_t i) const {
    if (rank == 1) return i * strides[0];
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += i % sizes[d] * strides[d];
      i /= sizes[d];
    }
    return off;
  }
};

// A walk over `sizes`/`strides` with neighbours that step as one dimension
// merged (a dense block of dims becomes one), so most walks have rank 1.
inline DimWalk dim_walk(const Shape& sizes, const Shape& strides) {
  DimWalk w{};
  for (int d = 0; d < sizes.rank(); ++d) {
    if (sizes[d] == 1) continue;
    if (w.rank > 0 && w.strides[w.rank - 1] == strides[d] * sizes[d]) {
      w.sizes[w.rank - 1] *= sizes[d];
      w.strides[w.rank - 1] = strides[d];
    } else {
      w.sizes[w.rank] = sizes[d];
      w.strides[w.rank] = strides[d];
      ++w.rank;
    }
  }
  if (w.rank == 0) {  // one element
    w.rank = 1;
    w.sizes[0] = 1;
    w.strides[0] = 0;
  }
  return w;
}

// Rows of a tensor: `rows` walks the first element of each row, `along` the
// elements of one row from there.
struct RowLayout {
  DimWalk rows, along;
  int64_t count = 1, length = 1;

  __device__ int64_t at(int64_t r, int64_t k) const { return rows.offset(r) + along.offset(k); }
};

// Rows over the kept dimensions (in row-major order, the order of the
// outputs), each running along the reduced ones.
inline RowLayout row_layout(const Shape& kept, const Shape& kept_strides, const Shape& reduced,
                            const Shape& reduced_strides) {
  return {dim_walk(kept, kept_strides), dim_walk(reduced, reduced_strides), kept.numel(), reduced.numel()};
}

}  // namespace kiln::cuda

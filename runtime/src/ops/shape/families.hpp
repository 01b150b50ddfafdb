// The groups of ops this folder registers; register.cpp calls each in turn.
#pragma once

#include "kiln/ops/registry.hpp"

namespace kiln::shape {

void register_view_ops(OpRegistry& r);         // squeeze, unsqueeze, flatten, narrow
void register_remap_ops(OpRegistry& r);        // flip, roll, repeat, pad, tril, triu
void register_masked_fill_ops(OpRegistry& r);  // masked_fill
void register_index_ops(OpRegistry& r);        // index_select, index_add
void register_scatter_ops(OpRegistry& r);      // scatter, scatter_add
void register_stack_chunk_ops(OpRegistry& r);  // stack, chunk
void register_one_hot_ops(OpRegistry& r);      // one_hot
void register_prelu_ops(OpRegistry& r);        // prelu, prelu_backward

#ifdef KILN_WITH_CUDA
// Kernels of the CUDA build for the ops above (kernels/cuda/shape_*.cu).
void register_cuda_remap_kernels(OpRegistry& r);           // flip, ..., triu, repeat_backward, pad_backward
void register_cuda_masked_fill_kernels(OpRegistry& r);     // masked_fill
void register_cuda_select_scatter_kernels(OpRegistry& r);  // index_select, index_add, scatter, scatter_add
void register_cuda_prelu_kernels(OpRegistry& r);           // prelu, prelu_backward
#endif

}  // namespace kiln::shape

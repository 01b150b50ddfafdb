// t:argmax(dim). The runtime has no arg-reduction op yet, and indices carry
// no gradient, so it is computed here on the host from the values read
// through the C API; replace it with the runtime's op when it gains one
// (this copies device tensors to the host). Element-wise comparisons (t:eq,
// t:lt, ...) are the runtime's ops, reached as every op is (tensor.cpp).
#include <vector>

#include "tensor_methods.hpp"
#include "tensor_util.hpp"

namespace kiln::lua {
namespace {

// t:argmax(dim?, keepdim?): i64 indices (from 0, like class targets) of the
// largest value along `dim` (the first one on ties); over all elements of
// the flattened tensor when dim is nil.
int tensor_argmax(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  const TensorInfo info = tensor_info(L, t);
  const std::vector<double> values = read_values(L, t);
  if (values.empty()) raise_message(L, "t:argmax(): the tensor has no elements");
  const int rank = int(info.shape.size());
  const bool all = lua_isnoneornil(L, 2);
  const int dim = all ? 0 : check_dim(L, 2, rank);
  const bool keepdim = lua_toboolean(L, 3);
  // Viewed as [outer, n, inner] around `dim`, or [1, numel, 1] for all.
  int64_t outer = 1, inner = 1;
  const int64_t n = all ? int64_t(values.size()) : info.shape[size_t(dim)];
  for (int d = 0; !all && d < rank; ++d) {
    if (d < dim) outer *= info.shape[size_t(d)];
    if (d > dim) inner *= info.shape[size_t(d)];
  }
  std::vector<double> indices(size_t(outer * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double* row = values.data() + o * n * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < n; ++k)
        if (row[k * inner] > row[best * inner]) best = k;
      indices[size_t(o * inner + i)] = double(best);
    }
  std::vector<int64_t> shape;
  if (!all) {
    shape = info.shape;
    if (keepdim) shape[size_t(dim)] = 1;
    else shape.erase(shape.begin() + dim);
  }
  push_tensor(L, make_tensor(L, indices, shape, KILN_I64, info.device, info.device_index));
  return 1;
}

}  // namespace

void add_tensor_compare_methods(lua_State* L) {
  lua_pushcfunction(L, guarded<tensor_argmax>);
  lua_setfield(L, -2, "argmax");
}

}  // namespace kiln::lua

// Element-wise comparisons (t:eq, ne, lt, le, gt, ge → bool tensors) and
// t:argmax(dim). The runtime has no comparison or arg-reduction ops yet, and
// their results carry no gradient, so they are computed here on the host
// from the values read through the C API; replace them with the runtime's
// ops when it gains them (these copy device tensors to the host).
#include <algorithm>
#include <utility>

#include "tensor_methods.hpp"
#include "tensor_util.hpp"

namespace kiln::lua {
namespace {

// The broadcast shape of two shapes (numpy's rule), or an error naming both.
std::vector<int64_t> broadcast_shape(lua_State* L, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      raise_message(L, lua_pushfstring(L, "cannot compare tensors whose dim %d sizes %d and %d do not broadcast",
                                       int(i), int(da), int(db)));
    out[i] = std::max(da, db);
  }
  return out;
}

// The values of `t` broadcast to `shape`.
std::vector<double> broadcast_values(lua_State* L, kiln_tensor* t, const std::vector<int64_t>& shape) {
  std::vector<int64_t> padded = tensor_info(L, t).shape;
  padded.insert(padded.begin(), shape.size() - padded.size(), 1);
  TensorRef same_rank(call_op1(L, "reshape", {t}, {kiln_attr_ints("shape", padded.data(), padded.size())}));
  TensorRef expanded(call_op1(L, "expand", {same_rank.get()}, {kiln_attr_ints("shape", shape.data(), shape.size())}));
  return read_values(L, expanded.get());
}

// t:eq(u) and the others; the comparison function is upvalue 1 (a light
// userdata holding its address).
using Comparison = bool (*)(double, double);

int tensor_compare(lua_State* L) {
  kiln_tensor* a = check_tensor(L, 1);
  const TensorArg b(L, 2, a);
  const auto compare = reinterpret_cast<Comparison>(lua_touserdata(L, lua_upvalueindex(1)));
  const TensorInfo info = tensor_info(L, a);
  const std::vector<int64_t> shape = broadcast_shape(L, info.shape, tensor_info(L, b.get()).shape);
  const std::vector<double> x = broadcast_values(L, a, shape), y = broadcast_values(L, b.get(), shape);
  std::vector<double> result(x.size());
  for (size_t i = 0; i < x.size(); ++i) result[i] = compare(x[i], y[i]) ? 1.0 : 0.0;
  push_tensor(L, make_tensor(L, result, shape, KILN_BOOL, info.device, info.device_index));
  return 1;
}

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

bool equal(double a, double b) { return a == b; }
bool not_equal(double a, double b) { return a != b; }
bool less(double a, double b) { return a < b; }
bool less_equal(double a, double b) { return a <= b; }
bool greater(double a, double b) { return a > b; }
bool greater_equal(double a, double b) { return a >= b; }

}  // namespace

void add_tensor_compare_methods(lua_State* L) {
  const std::pair<const char*, Comparison> comparisons[] = {
      {"eq", equal}, {"ne", not_equal}, {"lt", less}, {"le", less_equal}, {"gt", greater}, {"ge", greater_equal}};
  for (const auto& [name, compare] : comparisons) {
    lua_pushlightuserdata(L, reinterpret_cast<void*>(compare));
    lua_pushcclosure(L, guarded<tensor_compare>, 1);
    lua_setfield(L, -2, name);
  }
  lua_pushcfunction(L, guarded<tensor_argmax>);
  lua_setfield(L, -2, "argmax");
}

}  // namespace kiln::lua

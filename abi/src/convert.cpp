#include "convert.hpp"

#include <variant>

#include "kiln/error.hpp"
#include "kiln/ops/attrs.hpp"

namespace kiln::abi {

static_assert(int(KILN_F32) == int(DType::f32) && int(KILN_F64) == int(DType::f64) &&
              int(KILN_F16) == int(DType::f16) && int(KILN_BF16) == int(DType::bf16) &&
              int(KILN_I32) == int(DType::i32) && int(KILN_I64) == int(DType::i64) &&
              int(KILN_U8) == int(DType::u8) && int(KILN_BOOL) == int(DType::boolean));
static_assert(int(KILN_DEVICE_CPU) == int(DeviceType::cpu) && int(KILN_DEVICE_CUDA) == int(DeviceType::cuda));
static_assert(int(KILN_ATTR_INT) == int(AttrType::integer) && int(KILN_ATTR_FLOAT) == int(AttrType::real) &&
              int(KILN_ATTR_BOOL) == int(AttrType::boolean) && int(KILN_ATTR_INTS) == int(AttrType::ints) &&
              int(KILN_ATTR_FLOATS) == int(AttrType::reals) && int(KILN_ATTR_STRING) == int(AttrType::string) &&
              int(KILN_ATTR_DTYPE) == int(AttrType::dtype));

Shape to_shape(const int64_t* dims, int rank, const char* what) {
  KILN_CHECK(rank >= 0 && rank <= kMaxDims, Status::invalid_argument, "rank ", rank, " of '", what,
             "' is out of range (0 to ", kMaxDims, ")");
  KILN_CHECK(rank == 0 || dims, Status::invalid_argument, "argument '", what, "' is NULL for rank ", rank);
  return rank == 0 ? Shape() : Shape(std::span<const int64_t>(dims, size_t(rank)));
}

DType to_dtype(kiln_dtype dtype) {
  KILN_CHECK(int(dtype) >= 0 && int(dtype) < kNumDTypes, Status::invalid_argument, "unknown dtype value ",
             int(dtype), " (expected a kiln_dtype, 0 to ", kNumDTypes - 1, ")");
  return DType(dtype);
}

kiln_dtype from_dtype(DType dtype) { return kiln_dtype(dtype); }

Device to_device(kiln_device_type type, int index) {
  KILN_CHECK(type == KILN_DEVICE_CPU || type == KILN_DEVICE_CUDA, Status::invalid_argument,
             "unknown device type value ", int(type), " (expected KILN_DEVICE_CPU or KILN_DEVICE_CUDA)");
  if (type == KILN_DEVICE_CPU) {
    KILN_CHECK(index == 0, Status::invalid_argument, "the CPU device has index 0, got ", index);
    return Device::cpu();
  }
  KILN_CHECK(index >= 0, Status::invalid_argument, "negative CUDA device index ", index);
  return Device::cuda(index);
}

void check_struct_size(size_t size, const char* what) {
  KILN_CHECK(size >= sizeof(size_t), Status::invalid_argument, what, ".size is ", size, "; set it to sizeof(",
             what, ") before the call");
}

kiln_attr to_c_attr(const char* name, const AttrValue& value) {
  kiln_attr a{};
  a.name = name;
  std::visit(
      [&]<class V>(const V& v) {
        if constexpr (std::is_same_v<V, int64_t>) a.type = KILN_ATTR_INT, a.value.i = v;
        else if constexpr (std::is_same_v<V, double>) a.type = KILN_ATTR_FLOAT, a.value.f = v;
        else if constexpr (std::is_same_v<V, bool>) a.type = KILN_ATTR_BOOL, a.value.b = v ? 1 : 0;
        else if constexpr (std::is_same_v<V, std::vector<int64_t>>)
          a.type = KILN_ATTR_INTS, a.value.ints = {v.data(), v.size()};
        else if constexpr (std::is_same_v<V, std::vector<double>>)
          a.type = KILN_ATTR_FLOATS, a.value.floats = {v.data(), v.size()};
        else if constexpr (std::is_same_v<V, std::string>) a.type = KILN_ATTR_STRING, a.value.s = v.c_str();
        else a.type = KILN_ATTR_DTYPE, a.value.dtype = from_dtype(v);
      },
      value);
  return a;
}

}  // namespace kiln::abi

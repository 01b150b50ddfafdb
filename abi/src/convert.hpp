// Conversions from C API values to runtime ones, each checked: a value out of
// range is an invalid_argument error that says what was expected.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/kiln.h"
#include "kiln/ops/attrs.hpp"
#include "kiln/shape.hpp"

namespace kiln::abi {

// `what` names the argument in messages ("shape").
Shape to_shape(const int64_t* dims, int rank, const char* what);
DType to_dtype(kiln_dtype dtype);
Device to_device(kiln_device_type type, int index);
kiln_dtype from_dtype(DType dtype);
// `value` as a kiln_attr named `name`, pointing into `value` (lists, strings).
kiln_attr to_c_attr(const char* name, const AttrValue& value);

// Throws unless a size-prefixed struct's size covers at least its size field.
void check_struct_size(size_t size, const char* what);

}  // namespace kiln::abi

// True when the size-prefixed struct *ptr (from a caller's header of any
// version) is large enough to hold `field`.
#define KILN_HAS_FIELD(ptr, field) \
  (offsetof(std::remove_cvref_t<decltype(*(ptr))>, field) + sizeof((ptr)->field) <= (ptr)->size)

// The format's dtype names ("F32", "BF16", ...) and which of them kiln has.
#pragma once

#include <string_view>

#include "kiln/dtype.hpp"

namespace kiln::checkpoint {

enum class DTypeLookup {
  found,        // *out is set
  unsupported,  // a dtype of the format that kiln has no tensor type for
  unknown,      // not a dtype of the format
};

DTypeLookup lookup_safetensors_dtype(std::string_view name, DType* out);

}  // namespace kiln::checkpoint

// Text handed to a C caller in a caller-owned buffer, the convention of
// every kiln_*_report function: the text and its NUL go into `buffer`
// (`capacity` bytes), its length without the NUL into *length; either may be
// NULL (`buffer` only with `capacity` 0) to ask for the length alone.
#pragma once

#include <cstring>
#include <string>

#include "kiln/error.hpp"

namespace kiln::abi {

// Refuses a NULL buffer with a capacity; called before the text is made,
// which may take time.
inline void check_text_buffer(const char* buffer, size_t capacity) {
  KILN_CHECK(buffer != nullptr || capacity == 0, Status::invalid_argument, "buffer is NULL but capacity is ", capacity,
             "; pass NULL with capacity 0 to ask for the length only");
}

// After check_text_buffer.
inline void copy_text_out(const std::string& text, char* buffer, size_t capacity, size_t* length) {
  if (buffer) {
    KILN_CHECK(capacity > text.size(), Status::invalid_argument, "the buffer holds ", capacity,
               " bytes; the report needs ", text.size() + 1, " (with its terminating NUL)");
    std::memcpy(buffer, text.c_str(), text.size() + 1);
  }
  if (length) *length = text.size();
}

}  // namespace kiln::abi

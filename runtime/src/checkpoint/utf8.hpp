// UTF-8 validation shared by the JSON reader (strings in a header) and the
// writer (names and metadata must make a header the reader accepts).
#pragma once

#include <cstddef>
#include <string_view>

namespace kiln::checkpoint {

// The length (1 to 4) of the well-formed UTF-8 sequence that starts at
// s[i], or 0 when it is malformed: a stray continuation byte, a truncated
// sequence, an overlong encoding, a UTF-16 surrogate, or a code point above
// U+10FFFF.
size_t utf8_sequence_length(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

}  // namespace kiln::checkpoint

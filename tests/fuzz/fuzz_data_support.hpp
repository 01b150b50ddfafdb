// What the data-format fuzz targets share: a Failure (kiln-data's error) is
// the one acceptable way for a parser to refuse its input, and it must say
// which file it refused; anything else ends the run as a finding.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "file_bytes.hpp"
#include "support.hpp"

namespace kiln_fuzz {

inline void require(bool invariant) {
  if (!invariant) std::abort();
}

inline constexpr const char* kPath = "fuzzed-file";

// Runs `parse`; a refusal must be kiln-data's Failure naming kPath.
template <class Parse>
void parse_or_refuse(Parse&& parse) {
  try {
    parse();
  } catch (const kiln_data::Failure& f) {
    require(f.message.find(kPath) != std::string::npos);
  }
}

}  // namespace kiln_fuzz

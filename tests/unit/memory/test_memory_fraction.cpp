// KILN_CUDA_MEMORY_FRACTION: its parsing and the cap it gives.
#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/memory/memory_fraction.hpp"

using namespace kiln;

TEST_CASE("the memory fraction defaults to the whole device", "[memory][caching]") {
  CHECK(parse_memory_fraction(nullptr) == 1.0);
  CHECK(parse_memory_fraction("") == 1.0);
  CHECK(parse_memory_fraction("1") == 1.0);
  CHECK(parse_memory_fraction("0.25") == 0.25);
  CHECK(parse_memory_fraction("5e-1") == 0.5);
}

TEST_CASE("a memory fraction that is not a number above 0 and at most 1 is refused with the variable and value",
          "[memory][caching][errors]") {
  for (const char* bad : {"abc", "0", "-0.5", "1.5", "0.5GB", " ", "nan", "inf"}) {
    INFO(bad);
    try {
      parse_memory_fraction(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.status() == Status::invalid_argument);
      CHECK_THAT(e.what(), Catch::StartsWith(std::string("KILN_CUDA_MEMORY_FRACTION=\"") + bad + "\"") &&
                               Catch::Contains("expected a number greater than 0 and at most 1"));
    }
  }
}

TEST_CASE("the cap is the fraction of the device's memory, none for the whole", "[memory][caching]") {
  CHECK(memory_limit_bytes(1.0, 1000) == 0);
  CHECK(memory_limit_bytes(0.5, 1000) == 500);
  CHECK(memory_limit_bytes(1e-9, 1000) == 1);  // tiny, but still a cap
}

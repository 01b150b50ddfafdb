// The per-op profiler through the C API (kiln/profiler does the work).
#include <cstring>
#include <string>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "kiln/profiler/profile_report.hpp"

using kiln::abi::guarded;

extern "C" {

kiln_status kiln_profiler_begin(kiln_runtime* rt) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] { rt->runtime.profiler().begin(); });
}

kiln_status kiln_profiler_end(kiln_runtime* rt) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] { rt->runtime.profiler().end(); });
}

kiln_status kiln_profiler_report(kiln_runtime* rt, char* buffer, size_t capacity, size_t* length) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] {
    KILN_CHECK(buffer != nullptr || capacity == 0, kiln::Status::invalid_argument, "buffer is NULL but capacity is ",
               capacity, "; pass NULL with capacity 0 to ask for the length only");
    const std::string table = kiln::profile_table(rt->runtime.profiler().events());
    if (buffer) {
      KILN_CHECK(capacity > table.size(), kiln::Status::invalid_argument, "the buffer holds ", capacity,
                 " bytes; the report needs ", table.size() + 1, " (with its terminating NUL)");
      std::memcpy(buffer, table.c_str(), table.size() + 1);
    }
    if (length) *length = table.size();
  });
}

kiln_status kiln_profiler_write_trace(kiln_runtime* rt, const char* path) {
  KILN_REQUIRE(rt, path);
  return guarded(__func__, [&] { kiln::write_chrome_trace(rt->runtime.profiler().events(), path); });
}

}  // extern "C"

// The per-op profiler through the C API (kiln/profiler does the work).
#include <string>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "kiln/profiler/profile_report.hpp"
#include "text_out.hpp"

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
    kiln::abi::check_text_buffer(buffer, capacity);
    kiln::abi::copy_text_out(kiln::profile_table(rt->runtime.profiler().events()), buffer, capacity, length);
  });
}

kiln_status kiln_profiler_write_trace(kiln_runtime* rt, const char* path) {
  KILN_REQUIRE(rt, path);
  return guarded(__func__, [&] { kiln::write_chrome_trace(rt->runtime.profiler(), path); });
}

}  // extern "C"

// libFuzzer target: arbitrary bytes as a Lua chunk run in a sandboxed
// script with an instruction limit and a memory limit, through the
// scripting C API. Whatever the chunk, the run ends in a result or an error
// status with a message; a crash, a sanitizer report, a run past the
// libFuzzer timeout (the instruction limit failed) or past its memory limit
// is a finding. The memory_limit caps the Lua state; the tensors a script
// makes are the runtime's, capped as a host running untrusted scripts
// would cap them (kiln_memory_set_limit), so that a huge one is kiln's
// out-of-memory error, not an allocation the sanitizer's allocator
// refuses by aborting. Only this driver is instrumented (the kiln libraries are the
// build's own), so the search leans on the seeds and the dictionary.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/kiln.h"
#include "kiln/kiln_script.h"

namespace {

void require(bool invariant) {
  if (!invariant) std::abort();
}

kiln_runtime* shared_runtime() {
  static kiln_runtime* rt = [] {
    kiln_runtime_options o{};
    o.size = sizeof o;
    o.num_threads = 1;
    kiln_runtime* r = nullptr;
    require(kiln_runtime_create(&o, &r) == KILN_OK);
    require(kiln_memory_set_limit(r, KILN_DEVICE_CPU, 0, int64_t(512) << 20) == KILN_OK);
    return r;
  }();
  return rt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string chunk(reinterpret_cast<const char*>(data), size);
  kiln_script_options o{};
  o.size = sizeof o;
  o.sandbox = 1;
  o.instruction_limit = 2000000;
  o.memory_limit = 64u << 20;
  kiln_script* script = nullptr;
  require(kiln_script_create(shared_runtime(), &o, &script) == KILN_OK);
  const kiln_status status = kiln_script_run_string(script, chunk.c_str(), "=fuzzed");
  // An error always comes with its message.
  require(status == KILN_OK || kiln_last_error()[0] != '\0');
  kiln_script_release(script);
  return 0;
}

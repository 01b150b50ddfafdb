// kiln::Script: Lua chunks and files run against a runtime, their errors
// as kiln::Error, the sandbox and its limits.
#include <cstdio>
#include <string>
#include <type_traits>

#include "support.hpp"

static_assert(!std::is_copy_constructible_v<kiln::Script> && std::is_nothrow_move_constructible_v<kiln::Script>);

TEST_CASE("Script runs chunks that keep their globals", "[script]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Script script(rt);
  script.run_string("counter = 41");
  script.run_string("counter = counter + 1 assert(counter == 42)");
  script.run_string("assert(require('kiln').version == '" + kiln::version() + "')", "=version");
  REQUIRE_KILN_ERROR(script.run_string("\n\nerror('boom')", "@boom.lua"), KILN_ERR_SCRIPT, "boom.lua:3: boom",
                     "stack traceback:");
  REQUIRE_KILN_ERROR(script.run_string("x = = 1", "=syntax"), KILN_ERR_SCRIPT, "syntax:1:");
  // A runtime error the script does not catch keeps the runtime's status.
  REQUIRE_KILN_ERROR(script.run_string("local kiln = require('kiln') kiln.zeros(2, 3):matmul(kiln.zeros(2, 3))"),
                     KILN_ERR_SHAPE_MISMATCH, "matmul");
}

TEST_CASE("Script runs files with arguments", "[script]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const std::string path = KILN_CPP_TEST_DIR "/script_args.lua";
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs("local a, b = ...\nassert(a == 'one' and b == 'two' and arg[0]:find('script_args.lua'))\n", f);
  std::fclose(f);
  kiln::Script script(rt);
  script.run_file(path, {"one", "two"});
  REQUIRE_KILN_ERROR(script.run_file(path, {"one"}), KILN_ERR_SCRIPT, "assertion failed");
  REQUIRE_KILN_ERROR(script.run_file(KILN_CPP_TEST_DIR "/no_such_script.lua"), KILN_ERR_IO, "no_such_script.lua");
  std::remove(path.c_str());
}

TEST_CASE("Script sandbox: no os, instruction and memory limits", "[script]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::ScriptOptions o;
  o.sandbox = true;
  o.instruction_limit = 1000000;
  o.memory_limit = 16u << 20;
  kiln::Script script(rt, o);
  REQUIRE_KILN_ERROR(script.run_string("os.exit(1)"), KILN_ERR_SCRIPT, "os");
  REQUIRE_KILN_ERROR(script.run_string("while true do end"), KILN_ERR_SCRIPT, "instruction");
  REQUIRE_KILN_ERROR(script.run_string("local s = string.rep('x', 64 << 20)"), KILN_ERR_OUT_OF_MEMORY,
                     "memory limit is 16777216 bytes");
  script.run_string("assert(1 + 1 == 2)");  // still usable
  o.instruction_limit = -1;
  REQUIRE_KILN_ERROR(kiln::Script(rt, o), KILN_ERR_INVALID_ARGUMENT, "instruction_limit");
}

TEST_CASE("Script keeps its runtime, and moves", "[script][lifetime]") {
  kiln::Script kept(nullptr);
  CHECK_FALSE(kept);
  {
    const kiln::Runtime rt = kiln_test::make_runtime();
    kiln::Script script(rt);
    kept = std::move(script);
    CHECK_FALSE(script);
  }
  kept.run_string("local kiln = require('kiln') assert(kiln.zeros(2):sum():item() == 0)");
}

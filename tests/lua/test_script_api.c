/* The scripting C API: creation options, run_string and run_file, the
 * script's arguments, and what a failing run reports: its status, the
 * script's file:line and a traceback; a plugin's op as a tensor method.
 * Argument 1: the folder of tests/lua (for scripts/). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln_script.h"

static char scripts_dir[1024];

static const char* script_path(const char* name) {
  static char path[1200];
  snprintf(path, sizeof path, "%s/scripts/%s", scripts_dir, name);
  return path;
}

static void test_create(kiln_runtime* rt) {
  kiln_script* s = NULL;
  kiln_script_options zero_size;
  kiln_script_options negative;
  memset(&zero_size, 0, sizeof zero_size);
  memset(&negative, 0, sizeof negative);
  negative.size = sizeof negative;
  negative.instruction_limit = -1;
  CHECK_ERROR(kiln_script_create(NULL, NULL, &s), KILN_ERR_INVALID_ARGUMENT, "'rt' and 'out' must not be NULL");
  CHECK_ERROR(kiln_script_create(rt, &zero_size, &s), KILN_ERR_INVALID_ARGUMENT,
              "set it to sizeof(kiln_script_options)");
  CHECK_ERROR(kiln_script_create(rt, &negative, &s), KILN_ERR_INVALID_ARGUMENT, "instruction_limit must be >= 0");
  CHECK(s == NULL);
  kiln_script_release(NULL);
}

static void test_runs(kiln_runtime* rt) {
  kiln_script* s = NULL;
  const char* args[] = {"one", "two"};
  char chunk[128];
  CHECK_OK(kiln_script_create(rt, NULL, &s));
  if (!s) return;
  CHECK_ERROR(kiln_script_run_string(s, NULL, "=x"), KILN_ERR_INVALID_ARGUMENT, "must not be NULL");
  /* Globals persist between runs; require gives the module. */
  CHECK_OK(kiln_script_run_string(s, "counter = 41", "=first"));
  CHECK_OK(kiln_script_run_string(s, "counter = counter + 1 assert(counter == 42)", "=second"));
  snprintf(chunk, sizeof chunk, "assert(require('kiln').version == '%s')", kiln_version());
  CHECK_OK(kiln_script_run_string(s, chunk, "=version"));
  CHECK_OK(kiln_script_run_file(s, script_path("args.lua"), args, 2));
  CHECK_OK(kiln_script_run_string(s, "assert(ran_args)", "=ran"));
  CHECK_ERROR(kiln_script_run_file(s, script_path("no-such.lua"), NULL, 0), KILN_ERR_IO, "cannot open",
              "no-such.lua");
  /* Errors: a script's own, a syntax error, a non-string error value. */
  CHECK_ERROR(kiln_script_run_string(s, "\n\nerror('boom')", "@boom.lua"), KILN_ERR_SCRIPT, "boom.lua:3: boom",
              "stack traceback:");
  CHECK_ERROR(kiln_script_run_string(s, "x = = 1", "=syntax"), KILN_ERR_SCRIPT, "syntax:1:", "near '='");
  CHECK_ERROR(kiln_script_run_string(s, "error({})", "=table"), KILN_ERR_SCRIPT, "(error object is a table value)");
  /* An uncaught runtime error keeps the runtime's status and message, with
   * the script's line in front and the calls that led there after. */
  CHECK_ERROR(kiln_script_run_file(s, script_path("fails.lua"), NULL, 0), KILN_ERR_SHAPE_MISMATCH, "fails.lua:5: ",
              "matmul", "shapes_that_do_not_fit", "fails.lua:8:");
  /* Caught and raised again as the script's own error: KILN_ERR_SCRIPT. */
  CHECK_ERROR(kiln_script_run_string(
                  s, "local kiln = require('kiln') local ok, e = pcall(kiln.F.relu, 'x') error('wrapped: ' .. e, 0)",
                  "=wrapped"),
              KILN_ERR_SCRIPT, "wrapped: ", "kiln.Tensor, number or table of numbers expected");
  kiln_script_release(s);
}

/* A plugin's op is a tensor method too, as soon as the plugin is loaded. */
static void test_plugin_op_method(void) {
  kiln_runtime* rt = NULL;
  kiln_script* s = NULL;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) return;
  CHECK_OK(kiln_script_create(rt, NULL, &s));
  if (s) {
    CHECK_OK(kiln_script_run_string(s, "x = require('kiln').tensor({1, 2}) assert(x.test_cube == nil)", "=before"));
    CHECK_OK(kiln_plugin_load(rt, GOOD_PLUGIN));
    CHECK_OK(kiln_script_run_string(
        s, "local y = x:test_cube{scale = 2}:totable() assert(y[1] == 2 and y[2] == 16, 'test_cube as a method')",
        "=after"));
  }
  kiln_script_release(s);
  kiln_runtime_release(rt);
}

int main(int argc, char** argv) {
  kiln_runtime* rt = NULL;
  if (argc < 2) {
    fprintf(stderr, "usage: kiln_lua_test_script_api <tests/lua folder>\n");
    return 2;
  }
  snprintf(scripts_dir, sizeof scripts_dir, "%s", argv[1]);
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) return check_report("lua/script_api");
  test_create(rt);
  test_runs(rt);
  kiln_runtime_release(rt);
  test_plugin_op_method();
  return check_report("lua/script_api");
}

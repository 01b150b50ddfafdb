/* Runs one Lua test script: creates a runtime (default plugins) and a
 * script, makes the script's folder a place require() looks (for the
 * shared helpers such as tests/lua/expect.lua), runs the file with the remaining
 * arguments, and exits 0, or 1 with the error and its traceback. */
#include <stdio.h>
#include <string.h>

#include "kiln/kiln.h"
#include "kiln/kiln_script.h"

/* package.path = "<folder of path>/?.lua;" .. package.path */
static kiln_status add_script_folder_to_path(kiln_script* script, const char* path) {
  char chunk[4096];
  const char* slash = strrchr(path, '/');
  const int folder_length = slash ? (int)(slash - path) : 1;
  const char* folder = slash ? path : ".";
  if (snprintf(chunk, sizeof chunk, "package.path = [==[%.*s/?.lua;]==] .. package.path", folder_length, folder) >=
      (int)sizeof chunk) {
    return kiln_error_set(KILN_ERR_INVALID_ARGUMENT, "the script's path is too long");
  }
  return kiln_script_run_string(script, chunk, "=runner");
}

int main(int argc, char** argv) {
  kiln_runtime* rt = NULL;
  kiln_script* script = NULL;
  int failed = 1;
  if (argc < 2) {
    fprintf(stderr, "usage: kiln_lua_test_runner script.lua [args...]\n");
    return 2;
  }
  if (kiln_runtime_create(NULL, &rt) == KILN_OK && kiln_script_create(rt, NULL, &script) == KILN_OK &&
      add_script_folder_to_path(script, argv[1]) == KILN_OK &&
      kiln_script_run_file(script, argv[1], (const char* const*)(argv + 2), (size_t)(argc - 2)) == KILN_OK) {
    failed = 0;
    printf("%s: passed\n", argv[1]);
  } else {
    fprintf(stderr, "%s\n", kiln_last_error());
  }
  kiln_script_release(script);
  kiln_runtime_release(rt);
  return failed;
}

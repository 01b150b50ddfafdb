/* Each library the loader must refuse, one case per run (the case name is
 * the argument): the status, a message naming the file and the reason,
 * nothing of it registered, and a runtime that works as before. */
#include <stdio.h>
#include <string.h>

#include "loader_support.h"

/* The message starts with the path, right after the function's name. */
#define REFUSED(rt, path, ...) \
  CHECK_ERROR(kiln_plugin_load((rt), (path)), KILN_ERR_PLUGIN_REFUSED, "kiln_plugin_load: " path ": ", __VA_ARGS__)

static void check_strategy_absent(kiln_runtime* rt, const char* name) {
  kiln_strategy* s = NULL;
  CHECK_ERROR(kiln_strategy_create(rt, name, NULL, 0, &s), KILN_ERR_NOT_FOUND, "unknown strategy", name);
  CHECK(s == NULL);
}

static void refuses_not_a_library(kiln_runtime* rt) { REFUSED(rt, NOT_A_LIBRARY, "not a shared library: "); }

static void refuses_missing_file(kiln_runtime* rt) { REFUSED(rt, MISSING_PLUGIN, "no such file"); }

static void refuses_no_entry(kiln_runtime* rt) { REFUSED(rt, NO_ENTRY_PLUGIN, "does not export kiln_plugin_entry"); }

static void refuses_future_abi(kiln_runtime* rt) {
  REFUSED(rt, FUTURE_PLUGIN, "plugin 'test-future' (" FUTURE_PLUGIN ") needs ABI 2.0, host has 1.0 to 1.1");
  check_strategy_absent(rt, "test_future_was_registered"); /* register_fn never ran */
}

static void refuses_register_fails(kiln_runtime* rt) {
  REFUSED(rt, FAILING_PLUGIN, "registration failed: cannot read its settings file");
  check_strategy_absent(rt, "test_half_registered"); /* staged before the failure, not committed */
}

static void refuses_duplicate_layer(kiln_runtime* rt) {
  CHECK_OK(kiln_plugin_load(rt, DUP_A_PLUGIN));
  REFUSED(rt, DUP_B_PLUGIN, "layer 'TestDupLayer' is already registered by plugin 'test-dup-a'");
  CHECK(plugin_count(rt) == 1);
}

static void refuses_builtin_op_clash(kiln_runtime* rt) {
  const kiln_op* relu = NULL;
  REFUSED(rt, CLASH_PLUGIN, "op 'relu' is already registered by kiln (a built-in op)");
  CHECK_OK(kiln_op_find(rt, "relu", &relu));
}

static void refuses_loaded_twice(kiln_runtime* rt) {
  CHECK_OK(kiln_plugin_load(rt, GOOD_PLUGIN));
  REFUSED(rt, GOOD_PLUGIN, "a plugin named 'test-good' is already loaded");
  CHECK(plugin_count(rt) == 1);
}

static const struct {
  const char* name;
  void (*run)(kiln_runtime* rt);
} cases[] = {{"not_a_library", refuses_not_a_library},     {"missing_file", refuses_missing_file},
             {"no_entry", refuses_no_entry},               {"future_abi", refuses_future_abi},
             {"register_fails", refuses_register_fails},   {"duplicate_layer", refuses_duplicate_layer},
             {"builtin_op_clash", refuses_builtin_op_clash}, {"loaded_twice", refuses_loaded_twice}};

int main(int argc, char** argv) {
  size_t i;
  kiln_runtime* rt;
  const kiln_op* cube = NULL;
  if (argc != 2) {
    fprintf(stderr, "usage: %s <case>\n", argv[0]);
    return 2;
  }
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    if (strcmp(argv[1], cases[i].name) != 0) continue;
    rt = bare_runtime();
    cases[i].run(rt);
    check_runtime_works(rt);
    /* A good plugin still loads (the twice case has it already). */
    if (strcmp(argv[1], "loaded_twice") != 0) CHECK_OK(kiln_plugin_load(rt, GOOD_PLUGIN));
    CHECK_OK(kiln_op_find(rt, "test_cube", &cube));
    kiln_runtime_release(rt);
    return check_report(argv[1]);
  }
  fprintf(stderr, "unknown case '%s'\n", argv[1]);
  return 2;
}

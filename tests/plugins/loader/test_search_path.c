/* Plugins found at runtime creation: in the folders of KILN_PLUGIN_PATH (a
 * missing folder is no error), in the install's folder (the core plugins
 * beside libkiln.so), and refusals logged through the log callback while
 * creation goes on. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "loader_support.h"

static int warnings;
static int refusal_named_file;

static void count_warnings(void* user, kiln_log_level level, const char* message) {
  (void)user;
  if (level != KILN_LOG_WARNING) return;
  ++warnings;
  if (strstr(message, NOT_A_LIBRARY) && strstr(message, "not a shared library")) refusal_named_file = 1;
}

int main(void) {
  kiln_runtime* rt = NULL;
  kiln_runtime_options options = {0};
  const char* const paths[] = {NOT_A_LIBRARY};
  const kiln_op* cube = NULL;
  kiln_strategy* single = NULL;

  CHECK(setenv("KILN_PLUGIN_PATH", "/nonexistent/kiln/plugins:" SEARCH_DIR, 1) == 0);
  options.size = sizeof options;
  options.plugin_paths = paths;
  options.n_plugin_paths = 1;
  options.log = count_warnings;
  CHECK_OK(kiln_runtime_create(&options, &rt));
  CHECK(warnings >= 1); /* the core plugins of this build may add their own */
  CHECK(refusal_named_file);
  CHECK_OK(kiln_op_find(rt, "test_cube", &cube)); /* from KILN_PLUGIN_PATH */
  CHECK_OK(kiln_strategy_create(rt, "single", NULL, 0, &single)); /* from the install's folder */
  kiln_strategy_release(single);
  check_runtime_works(rt);
  kiln_runtime_release(rt);

  /* Skipping the defaults leaves KILN_PLUGIN_PATH alone. */
  options.n_plugin_paths = 0;
  options.skip_default_plugins = 1;
  CHECK_OK(kiln_runtime_create(&options, &rt));
  CHECK_ERROR(kiln_op_find(rt, "test_cube", &cube), KILN_ERR_NOT_FOUND, "unknown op 'test_cube'");
  CHECK(plugin_count(rt) == 0);
  kiln_runtime_release(rt);
  return check_report("plugins/loader/search_path");
}

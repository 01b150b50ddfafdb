/* Two plugins each carry their own copy of a function with the same name
 * (as two plugins linking different copies of a library would). Loaded
 * RTLD_LOCAL, each calls its own copy, whichever was loaded first. */
#include "loader_support.h"

static int world_size_of(kiln_runtime* rt, const char* strategy) {
  kiln_strategy* s = NULL;
  int rank = -1, world = -1;
  CHECK_OK(kiln_strategy_create(rt, strategy, NULL, 0, &s));
  if (s) CHECK_OK(kiln_strategy_rank(s, &rank, &world));
  kiln_strategy_release(s);
  return world;
}

int main(void) {
  kiln_runtime* rt = bare_runtime();
  CHECK_OK(kiln_plugin_load(rt, LOCAL_A_PLUGIN));
  CHECK_OK(kiln_plugin_load(rt, LOCAL_B_PLUGIN));
  CHECK(world_size_of(rt, "local_a") == 1);
  CHECK(world_size_of(rt, "local_b") == 2);
  kiln_runtime_release(rt);
  return check_report("plugins/loader/local_symbols");
}

/* Unloading a plugin while an object it made is alive: the type can no
 * longer be created, the object still works, and the library stays mapped
 * until the object is released. */
#include "library_mapped.h"
#include "loader_support.h"

int main(void) {
  kiln_runtime* rt = bare_runtime();
  kiln_strategy *s = NULL, *again = NULL;
  int rank = -1, world = -1;

  CHECK(!mapped(LOCAL_A_PLUGIN));
  CHECK_OK(kiln_plugin_load(rt, LOCAL_A_PLUGIN));
  CHECK(mapped(LOCAL_A_PLUGIN));
  CHECK_OK(kiln_strategy_create(rt, "local_a", NULL, 0, &s));
  CHECK_OK(kiln_plugin_unload(rt, "test-local-a"));
  CHECK(plugin_count(rt) == 0);
  CHECK_ERROR(kiln_strategy_create(rt, "local_a", NULL, 0, &again), KILN_ERR_NOT_FOUND, "unknown strategy 'local_a'");

  CHECK(mapped(LOCAL_A_PLUGIN)); /* the strategy holds it */
  CHECK_OK(kiln_strategy_rank(s, &rank, &world));
  CHECK(rank == 0 && world == 1);
  kiln_strategy_release(s);
  CHECK(!mapped(LOCAL_A_PLUGIN));

  /* It can be loaded again afterwards. */
  CHECK_OK(kiln_plugin_load(rt, LOCAL_A_PLUGIN));
  CHECK_OK(kiln_strategy_create(rt, "local_a", NULL, 0, &again));
  kiln_strategy_release(again);
  kiln_runtime_release(rt);
  CHECK(!mapped(LOCAL_A_PLUGIN));
  return check_report("plugins/loader/unload");
}

/* What kiln_plugin_count, kiln_plugin_info_get and kiln_plugin_registration
 * report of a loaded plugin, and their errors. */
#include <string.h>

#include "kiln/kiln_plugin.h"
#include "loader_support.h"

int main(void) {
  kiln_runtime* rt = bare_runtime();
  kiln_plugin_info info = {0};
  kiln_registration_kind kind;
  const char* name = NULL;
  info.size = sizeof info;

  CHECK(plugin_count(rt) == 0);
  CHECK_OK(kiln_plugin_load(rt, GOOD_PLUGIN));
  CHECK(plugin_count(rt) == 1);
  CHECK_OK(kiln_plugin_info_get(rt, 0, &info));
  CHECK(info.name && strcmp(info.name, "test-good") == 0);
  CHECK(info.version && strcmp(info.version, "1.2.3") == 0);
  CHECK(info.path && strcmp(info.path, GOOD_PLUGIN) == 0);
  CHECK(info.abi_version == KILN_PLUGIN_ABI(1, 0));
  CHECK(info.num_registrations == 3);

  /* In registration order. */
  CHECK_OK(kiln_plugin_registration(rt, 0, 0, &kind, &name));
  CHECK(kind == KILN_REG_OP && strcmp(name, "test_cube") == 0);
  CHECK_OK(kiln_plugin_registration(rt, 0, 1, &kind, &name));
  CHECK(kind == KILN_REG_OP && strcmp(name, "test_cube_grad") == 0);
  CHECK_OK(kiln_plugin_registration(rt, 0, 2, &kind, &name));
  CHECK(kind == KILN_REG_STRATEGY && strcmp(name, "test_fixed") == 0);
  CHECK(strcmp(kiln_registration_kind_name(KILN_REG_OP), "op") == 0);
  CHECK(strcmp(kiln_registration_kind_name(KILN_REG_LAYER), "layer") == 0);
  CHECK(strcmp(kiln_registration_kind_name(KILN_REG_STRATEGY), "strategy") == 0);

  CHECK_ERROR(kiln_plugin_registration(rt, 0, 3, &kind, &name), KILN_ERR_INVALID_ARGUMENT,
              "registration index 3 is out of range", "'test-good' has 3");
  CHECK_ERROR(kiln_plugin_info_get(rt, 1, &info), KILN_ERR_INVALID_ARGUMENT, "plugin index 1 is out of range",
              "1 plugins are loaded");
  info.size = 0;
  CHECK_ERROR(kiln_plugin_info_get(rt, 0, &info), KILN_ERR_INVALID_ARGUMENT, "kiln_plugin_info");
  CHECK_ERROR(kiln_plugin_unload(rt, "test-goood"), KILN_ERR_NOT_FOUND, "no plugin named 'test-goood'",
              "loaded: test-good");

  CHECK_OK(kiln_plugin_unload(rt, "test-good"));
  CHECK(plugin_count(rt) == 0);
  kiln_runtime_release(rt);
  return check_report("plugins/loader/listing");
}

/* kiln_registration_config_count / _entry: the schema a plugin declared for
 * its types, read back through the C API (Linear's entries, SGD's
 * hyper-parameters), and the errors of an unknown name, an op and an index
 * out of range. */
#include <string.h>

#include "layer_test.h"

static void test_linear_schema(kiln_runtime* rt) {
  size_t count = 0;
  kiln_attr entry;
  int required = -1;
  const char* doc = NULL;
  CHECK_OK(kiln_registration_config_count(rt, KILN_REG_LAYER, "Linear", &count));
  CHECK(count == 6);
  CHECK_OK(kiln_registration_config_entry(rt, KILN_REG_LAYER, "Linear", 0, &entry, &required, &doc));
  CHECK(strcmp(entry.name, "in_features") == 0 && entry.type == KILN_ATTR_INT && required == 1);
  CHECK(strstr(doc, "size of each input sample") != NULL);
  CHECK_OK(kiln_registration_config_entry(rt, KILN_REG_LAYER, "Linear", 2, &entry, &required, &doc));
  CHECK(strcmp(entry.name, "bias") == 0 && entry.type == KILN_ATTR_BOOL && entry.value.b == 1 && required == 0);
  CHECK_OK(kiln_registration_config_entry(rt, KILN_REG_LAYER, "Linear", 5, &entry, &required, &doc));
  CHECK(strcmp(entry.name, "activation") == 0 && entry.type == KILN_ATTR_STRING &&
        strcmp(entry.value.s, "none") == 0);
}

static void test_optimizer_schema(kiln_runtime* rt) {
  size_t count = 0, i;
  kiln_attr entry;
  int required = -1, found = 0;
  const char* doc = NULL;
  CHECK_OK(kiln_registration_config_count(rt, KILN_REG_OPTIMIZER, "SGD", &count));
  CHECK(count > 0);
  for (i = 0; i < count; ++i) {
    CHECK_OK(kiln_registration_config_entry(rt, KILN_REG_OPTIMIZER, "SGD", i, &entry, &required, &doc));
    if (strcmp(entry.name, "lr") != 0) continue;
    found = 1;
    CHECK(entry.type == KILN_ATTR_FLOAT && entry.value.f == 1e-3 && required == 0);
  }
  CHECK(found);
}

static void test_errors(kiln_runtime* rt) {
  size_t count = 0;
  kiln_attr entry;
  int required = 0;
  const char* doc = NULL;
  CHECK_ERROR(kiln_registration_config_count(rt, KILN_REG_LAYER, "Linearr", &count), KILN_ERR_NOT_FOUND,
              "unknown layer 'Linearr'", "Linear");
  CHECK_ERROR(kiln_registration_config_count(rt, KILN_REG_OP, "matmul", &count), KILN_ERR_UNSUPPORTED,
              "op 'matmul': ops have attributes, not a configuration schema");
  CHECK_ERROR(kiln_registration_config_entry(rt, KILN_REG_LAYER, "Linear", 6, &entry, &required, &doc),
              KILN_ERR_INVALID_ARGUMENT, "entry index 6 is out of range", "layer 'Linear' has 6");
  CHECK_ERROR(kiln_registration_config_count(rt, (kiln_registration_kind)42, "Linear", &count),
              KILN_ERR_INVALID_ARGUMENT, "unknown registration kind 42");
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_linear_schema(rt);
  test_optimizer_schema(rt);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/config_schema");
}

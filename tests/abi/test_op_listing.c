/* Listing the ops of a runtime: every op is reachable by index in name
 * order, each describes its inputs, attributes with defaults,
 * backward, kernels and plugin; a plugin's ops join the list when it is
 * loaded; bad indices and NULL arguments give errors naming them. */
#include <string.h>

#include "check.h"

#define F32_BIT (1u << KILN_F32)
#define F64_BIT (1u << KILN_F64)

static const kiln_op* op_named(kiln_runtime* rt, const char* name) {
  const kiln_op* op = NULL;
  CHECK_OK(kiln_op_find(rt, name, &op));
  return op;
}

static kiln_op_info info_of(const kiln_op* op) {
  kiln_op_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  CHECK_OK(kiln_op_info_get(op, &info));
  return info;
}

static kiln_op_attr_info attr_of(const kiln_op* op, size_t index) {
  kiln_op_attr_info attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  CHECK_OK(kiln_op_attr_get(op, index, &attr));
  return attr;
}

static kiln_op_input_info input_of(const kiln_op* op, size_t index) {
  kiln_op_input_info input;
  memset(&input, 0, sizeof input);
  input.size = sizeof input;
  CHECK_OK(kiln_op_input_get(op, index, &input));
  return input;
}

/* Every index gives a distinct op, in strictly increasing name order, and
 * the handle by index is the handle by name. Returns the count. */
static size_t every_op_in_name_order(kiln_runtime* rt) {
  size_t count = 0, i;
  const char* previous = "";
  CHECK_OK(kiln_op_count(rt, &count));
  CHECK(count > 50);
  for (i = 0; i < count; ++i) {
    const kiln_op* op = NULL;
    kiln_op_info info;
    CHECK_OK(kiln_op_at(rt, i, &op));
    info = info_of(op);
    CHECK(strcmp(previous, info.name) < 0);
    CHECK(op_named(rt, info.name) == op);
    previous = info.name;
  }
  return count;
}

static void builtin_schemas(kiln_runtime* rt) {
  const kiln_op* linear = op_named(rt, "linear");
  const kiln_op* split = op_named(rt, "split");
  const kiln_op* dropout = op_named(rt, "dropout");
  const kiln_op* concat = op_named(rt, "concat");
  const kiln_op* sgd = op_named(rt, "sgd_update");
  const kiln_op* reshape = op_named(rt, "reshape");
  kiln_op_info info = info_of(linear);
  kiln_op_input_info input;
  kiln_op_attr_info attr;

  CHECK(strcmp(info.name, "linear") == 0);
  CHECK(strcmp(info.plugin, "") == 0);
  CHECK(info.num_inputs == 3 && info.num_attrs == 1);
  CHECK(info.has_backward && !info.writes_inputs && !info.is_view);
  CHECK((info.cpu_dtypes & F32_BIT) && (info.cpu_dtypes & F64_BIT));
  CHECK(!(info.cpu_dtypes & (1u << KILN_BOOL)));
  input = input_of(linear, 0);
  CHECK(strcmp(input.name, "input") == 0 && !input.optional && !input.variadic);
  input = input_of(linear, 2);
  CHECK(strcmp(input.name, "bias") == 0 && input.optional && !input.variadic);
  attr = attr_of(linear, 0);
  CHECK(strcmp(attr.name, "activation") == 0 && attr.type == KILN_ATTR_STRING && !attr.required);
  CHECK(strcmp(attr.default_text, "\"none\"") == 0);
  CHECK(attr.default_value.type == KILN_ATTR_STRING && strcmp(attr.default_value.value.s, "none") == 0);
  CHECK(strcmp(attr.default_value.name, "activation") == 0);

  /* split: sizes has no default. */
  info = info_of(split);
  CHECK(info.num_inputs == 1 && info.num_attrs == 2 && info.has_backward);
  attr = attr_of(split, 0);
  CHECK(strcmp(attr.name, "dim") == 0 && attr.type == KILN_ATTR_INT && strcmp(attr.default_text, "0") == 0);
  CHECK(attr.default_value.type == KILN_ATTR_INT && attr.default_value.value.i == 0);
  attr = attr_of(split, 1);
  CHECK(strcmp(attr.name, "sizes") == 0 && attr.type == KILN_ATTR_INTS && attr.required);
  CHECK(strcmp(attr.default_text, "") == 0 && attr.default_value.type == KILN_ATTR_INTS);

  attr = attr_of(dropout, 0);
  CHECK(attr.type == KILN_ATTR_FLOAT && strcmp(attr.default_text, "0.5") == 0 && attr.default_value.value.f == 0.5);
  attr = attr_of(dropout, 1);
  CHECK(attr.type == KILN_ATTR_BOOL && strcmp(attr.default_text, "true") == 0 && attr.default_value.value.b == 1);

  input = input_of(concat, 0);
  CHECK(input.variadic && !input.optional);

  info = info_of(sgd);
  CHECK(info.writes_inputs && !info.has_backward);
  info = info_of(reshape);
  CHECK(info.is_view);
  attr = attr_of(reshape, 0);
  CHECK(attr.type == KILN_ATTR_INTS);
}

/* A caller built against an older header passes a smaller struct: fields
 * past its size are left alone. */
static void older_struct_sizes(kiln_runtime* rt) {
  kiln_op_info info;
  memset(&info, 0x5a, sizeof info);
  info.size = offsetof(kiln_op_info, plugin);
  CHECK_OK(kiln_op_info_get(op_named(rt, "add"), &info));
  CHECK(strcmp(info.name, "add") == 0);
  CHECK(info.num_inputs == (size_t)0x5a5a5a5a5a5a5a5aull);
}

static void plugin_ops(kiln_runtime* rt, size_t builtin_count) {
  size_t count = 0;
  const kiln_op* cube;
  kiln_op_info info;
  kiln_op_attr_info attr;
  CHECK_OK(kiln_plugin_load(rt, GOOD_PLUGIN));
  CHECK_OK(kiln_op_count(rt, &count));
  CHECK(count == builtin_count + 2);
  CHECK(every_op_in_name_order(rt) == count);
  cube = op_named(rt, "test_cube");
  info = info_of(cube);
  CHECK(strcmp(info.plugin, "test-good") == 0);
  CHECK(info.num_inputs == 1 && info.has_backward);
  CHECK(info.cpu_dtypes == (F32_BIT | F64_BIT) && info.cuda_dtypes == 0);
  CHECK(strcmp(input_of(cube, 0).name, "x") == 0);
  attr = attr_of(cube, 0);
  CHECK(strcmp(attr.name, "scale") == 0 && attr.type == KILN_ATTR_FLOAT && strcmp(attr.default_text, "1") == 0);
  CHECK(!info_of(op_named(rt, "test_cube_grad")).has_backward);
  /* The op stays in the table after its plugin is unloaded, and so do its strings. */
  CHECK_OK(kiln_plugin_unload(rt, "test-good"));
  CHECK(strcmp(info_of(cube).plugin, "test-good") == 0);
}

static void bad_arguments(kiln_runtime* rt) {
  size_t count = 0;
  const kiln_op* op = NULL;
  const kiln_op* split = op_named(rt, "split");
  kiln_op_info info;
  kiln_op_input_info input;
  kiln_op_attr_info attr;
  char text[64];
  info.size = sizeof info;
  input.size = sizeof input;
  attr.size = sizeof attr;
  CHECK_OK(kiln_op_count(rt, &count));
  sprintf(text, "the runtime has %lu ops", (unsigned long)count);
  CHECK_ERROR(kiln_op_at(rt, count, &op), KILN_ERR_INVALID_ARGUMENT, "op index", "out of range", text);
  CHECK(op == NULL);
  CHECK_ERROR(kiln_op_count(NULL, &count), KILN_ERR_INVALID_ARGUMENT, "kiln_op_count", "'rt'");
  CHECK_ERROR(kiln_op_count(rt, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_op_count", "'count'");
  CHECK_ERROR(kiln_op_at(NULL, 0, &op), KILN_ERR_INVALID_ARGUMENT, "kiln_op_at", "'rt'");
  CHECK_ERROR(kiln_op_at(rt, 0, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_op_at", "'out'");
  CHECK_ERROR(kiln_op_info_get(NULL, &info), KILN_ERR_INVALID_ARGUMENT, "kiln_op_info_get", "'op'");
  CHECK_ERROR(kiln_op_info_get(split, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_op_info_get", "'out'");
  CHECK_ERROR(kiln_op_input_get(NULL, 0, &input), KILN_ERR_INVALID_ARGUMENT, "kiln_op_input_get", "'op'");
  CHECK_ERROR(kiln_op_input_get(split, 0, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_op_input_get", "'out'");
  CHECK_ERROR(kiln_op_attr_get(NULL, 0, &attr), KILN_ERR_INVALID_ARGUMENT, "kiln_op_attr_get", "'op'");
  CHECK_ERROR(kiln_op_attr_get(split, 0, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_op_attr_get", "'out'");
  CHECK_ERROR(kiln_op_input_get(split, 1, &input), KILN_ERR_INVALID_ARGUMENT,
              "input index 1 is out of range: op 'split' has 1 input");
  CHECK_ERROR(kiln_op_attr_get(split, 2, &attr), KILN_ERR_INVALID_ARGUMENT,
              "attribute index 2 is out of range: op 'split' has 2 attributes");
  info.size = 0;
  CHECK_ERROR(kiln_op_info_get(split, &info), KILN_ERR_INVALID_ARGUMENT, "kiln_op_info");
}

int main(void) {
  kiln_runtime* rt = NULL;
  kiln_runtime_options options;
  size_t count;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.skip_default_plugins = 1;
  if (kiln_runtime_create(&options, &rt) != KILN_OK) {
    fprintf(stderr, "cannot create a runtime: %s\n", kiln_last_error());
    return 1;
  }
  count = every_op_in_name_order(rt);
  builtin_schemas(rt);
  older_struct_sizes(rt);
  bad_arguments(rt);
  plugin_ops(rt, count);
  kiln_runtime_release(rt);
  return check_report("abi/op_listing");
}

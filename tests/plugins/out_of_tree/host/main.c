/* Runs the checks of the kiln-example-swish plugin, built out of tree, on a
 * kiln installed into a prefix: this program links the installed
 * libkiln.so, whose runtime must find the installed core plugins by itself.
 *
 *   swish_plugin_test <plugin.so> <installed plugin folder> <number of plugins in it>
 */
#include <stdlib.h>
#include <string.h>

#include "plugin_checks.h"

/* The runtime loaded every plugin of the installed folder, and only those. */
static void check_installed_plugins(kiln_runtime* rt, const char* folder, size_t expected) {
  size_t count = 0;
  CHECK_OK(kiln_plugin_count(rt, &count));
  if (count != expected)
    fprintf(stderr, "the runtime loaded %zu plugins, the installed folder %s holds %zu\n", count, folder, expected);
  CHECK(count == expected);
  for (size_t i = 0; i < count; ++i) {
    kiln_plugin_info info = {.size = sizeof(kiln_plugin_info)};
    CHECK_OK(kiln_plugin_info_get(rt, i, &info));
    printf("  installed plugin %s %s from %s\n", info.name, info.version, info.path);
    if (info.path && strncmp(info.path, folder, strlen(folder)) != 0)
      fprintf(stderr, "plugin %s was loaded from %s, not from the installed folder %s\n", info.name, info.path, folder);
    CHECK(info.path && strncmp(info.path, folder, strlen(folder)) == 0);
  }
}

/* Loads the plugin and checks what it says it registered. */
static void check_load(kiln_runtime* rt, const char* path) {
  static const char* const names[] = {"swish", "swish_backward", "Swish", "lion_sign", "Lion"};
  size_t count = 0;
  kiln_plugin_info info = {.size = sizeof(kiln_plugin_info)};
  CHECK_OK(kiln_plugin_load(rt, path));
  CHECK_OK(kiln_plugin_count(rt, &count));
  if (count == 0) return;
  CHECK_OK(kiln_plugin_info_get(rt, count - 1, &info));
  CHECK(info.name && strcmp(info.name, "kiln-example-swish") == 0);
  CHECK(info.version && strcmp(info.version, "1.0.0") == 0);
  CHECK(info.num_registrations == sizeof names / sizeof names[0]);
  for (size_t i = 0; i < info.num_registrations; ++i) {
    kiln_registration_kind kind = KILN_REG_OP;
    const char* name = NULL;
    int known = 0;
    CHECK_OK(kiln_plugin_registration(rt, count - 1, i, &kind, &name));
    for (size_t j = 0; name && j < sizeof names / sizeof names[0]; ++j) known |= strcmp(name, names[j]) == 0;
    printf("  registers %s %s\n", kiln_registration_kind_name(kind), name ? name : "(null)");
    CHECK(known);
  }
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <plugin.so> <installed plugin folder> <number of plugins in it>\n", argv[0]);
    return 2;
  }
  /* Several threads, so that large tensors are split into parallel chunks. */
  const kiln_runtime_options options = {.size = sizeof(kiln_runtime_options), .num_threads = 4, .seed = 7};
  kiln_runtime* rt = NULL;
  int failures = 0;
  printf("runtime of the installed kiln %s\n", kiln_version());
  CHECK_OK(kiln_runtime_create(&options, &rt));
  if (!rt) return check_report("swish_plugin_test");
  check_installed_plugins(rt, argv[2], (size_t)strtoul(argv[3], NULL, 10));
  printf("loading %s\n", argv[1]);
  check_load(rt, argv[1]);
  if (check_failures == 0) {
    printf("op swish: forward, gradients, bad inputs\n");
    failures += check_swish_op(rt);
    printf("layer Swish\n");
    failures += check_swish_layer(rt);
    printf("optimizer Lion\n");
    failures += check_lion(rt);
    printf("training with Swish and Lion\n");
    failures += check_training(rt);
  }
  kiln_runtime_release(rt);
  check_failures += failures;
  return check_report("swish_plugin_test");
}

/* A shared library that is no plugin: it does not export kiln_plugin_entry. */
__attribute__((visibility("default"))) int kiln_test_not_a_plugin(void) { return 42; }

// kiln::Runtime: creation options, shared ownership, seeding, memory,
// devices and plugins.
#include <string>
#include <vector>

#include "support.hpp"

TEST_CASE("Runtime copies share one runtime, a moved-from one holds nothing", "[runtime]") {
  kiln::Runtime a = kiln_test::make_runtime();
  REQUIRE(a);
  kiln::Runtime b = a;
  CHECK(b.get() == a.get());
  kiln::Runtime c(std::move(a));
  CHECK_FALSE(a);
  CHECK(c.get() == b.get());
  kiln::Runtime none(nullptr);
  CHECK_FALSE(none);
  none = c;
  CHECK(none.get() == c.get());
  none = none;  // assigning itself keeps the reference
  CHECK(none.get() == c.get());
  c = kiln::Runtime(nullptr);
  CHECK_FALSE(c);
  CHECK_NOTHROW(b.manual_seed(4));  // the others still hold it
}

TEST_CASE("Runtime adopts and retains handles of the C API", "[runtime]") {
  kiln_runtime* raw = nullptr;
  REQUIRE(kiln_runtime_create(nullptr, &raw) == KILN_OK);
  {
    kiln::Runtime retained = kiln::Runtime::retain(raw);  // one more reference
    CHECK(retained.get() == raw);
  }
  kiln::Runtime adopted = kiln::Runtime::adopt(raw);  // takes over the first
  CHECK_NOTHROW(adopted.manual_seed(1));
}

TEST_CASE("Runtime outlived by a tensor: the tensor keeps it", "[runtime]") {
  kiln::Tensor t(nullptr);
  {
    kiln::Runtime rt = kiln_test::make_runtime();
    t = kiln::Tensor::full(rt, {2}, 3.0);
  }
  CHECK(t.to_vector<float>() == std::vector<float>{3.0f, 3.0f});
}

TEST_CASE("manual_seed restarts the stream layers initialise from", "[runtime]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  rt.manual_seed(5);
  const std::vector<float> first = kiln_test::make_linear(rt).parameters()[0].to_vector<float>();
  const std::vector<float> other = kiln_test::make_linear(rt).parameters()[0].to_vector<float>();
  rt.manual_seed(5);
  CHECK(kiln_test::make_linear(rt).parameters()[0].to_vector<float>() == first);
  CHECK(other != first);
}

TEST_CASE("Runtime reports memory and devices", "[runtime]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const int64_t before = rt.memory_stats().current_bytes;
  const kiln::Tensor t = kiln::Tensor::zeros(rt, {1024});
  CHECK(rt.memory_stats(kiln::Device::cpu()).current_bytes >= before + 4096);
  const int gpus = rt.cuda_device_count();
  CHECK(gpus >= 0);
  CHECK(rt.cuda_unavailable_reason().empty() == (gpus > 0));
  REQUIRE_KILN_ERROR(rt.memory_stats(kiln::Device::cuda(gpus + 7)), KILN_ERR_DEVICE_MISMATCH, "cuda");
}

TEST_CASE("Runtime lists its plugins and what they register", "[runtime][plugins]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  bool found_linear = false;
  for (const kiln::PluginInfo& p : rt.plugins()) {
    CHECK_FALSE(p.name.empty());
    CHECK_FALSE(p.path.empty());
    for (const kiln::PluginRegistration& r : p.registrations)
      found_linear = found_linear || (r.kind == KILN_REG_LAYER && r.name == "Linear");
  }
  CHECK(found_linear);
}

TEST_CASE("Runtime options: no default plugins, a plugin path, a log", "[runtime][plugins]") {
  std::vector<std::string> messages;
  kiln::RuntimeOptions o;
  o.skip_default_plugins = true;
  o.plugin_paths = {"/nonexistent/libkiln_nothing.so"};
  o.log = [](void* user_data, kiln_log_level, const char* message) {
    static_cast<std::vector<std::string>*>(user_data)->push_back(message);
  };
  o.log_user_data = &messages;
  kiln::Runtime rt(o);
  CHECK(rt.plugins().empty());
  REQUIRE(messages.size() == 1);
  CHECK_THAT(messages[0], Catch::Contains("/nonexistent/libkiln_nothing.so"));
  REQUIRE_KILN_ERROR(kiln::Module(rt, "Linear"), KILN_ERR_NOT_FOUND, "Linear");
  REQUIRE_KILN_ERROR(rt.load_plugin("/nonexistent/libkiln_nothing.so"), KILN_ERR_PLUGIN_REFUSED,
                     "/nonexistent/libkiln_nothing.so");
  REQUIRE_KILN_ERROR(rt.unload_plugin("kiln-nothing"), KILN_ERR_NOT_FOUND, "kiln-nothing");
}

TEST_CASE("Runtime loads and unloads a plugin by path, and what it made stays usable", "[runtime][plugins]") {
  kiln::RuntimeOptions o;
  o.skip_default_plugins = true;
  kiln::Runtime rt(o);
  rt.load_plugin(KILN_CPP_TEST_PLUGIN_DIR "/libkiln_layers.so");
  const std::vector<kiln::PluginInfo> plugins = rt.plugins();
  REQUIRE(plugins.size() == 1);
  const kiln::Module linear = kiln_test::make_linear(rt);
  rt.unload_plugin(plugins[0].name);
  REQUIRE_KILN_ERROR(kiln_test::make_linear(rt), KILN_ERR_NOT_FOUND, "Linear");
  CHECK(linear({kiln::Tensor::zeros(rt, {1, 2})}).shape() == kiln::Shape{1, 2});
}

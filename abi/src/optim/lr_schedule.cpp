// Learning-rate schedules through the C API: an object made by a registered
// schedule type, asked for the rate at a step.
#include <memory>
#include <string>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "plugin/plugin_call.hpp"
#include "plugin/registry.hpp"

using kiln::abi::guarded;

struct kiln_lr_schedule {
  explicit kiln_lr_schedule(std::shared_ptr<const kiln::abi::LrScheduleEntry> entry)
      : type(std::move(entry)), who(kiln::abi::describe_registered("lr schedule", type->name, type->plugin_name)) {}
  ~kiln_lr_schedule() {
    if (state && type->type.destroy) type->type.destroy(state);
  }
  kiln_lr_schedule(const kiln_lr_schedule&) = delete;
  kiln_lr_schedule& operator=(const kiln_lr_schedule&) = delete;

  std::shared_ptr<const kiln::abi::LrScheduleEntry> type;  // keeps the plugin loaded
  std::string who;
  void* state = nullptr;
};

extern "C" {

kiln_status kiln_lr_schedule_create(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                                    kiln_lr_schedule** out) {
  KILN_REQUIRE(rt, type, out);
  return guarded(__func__, [&] {
    auto schedule = std::make_unique<kiln_lr_schedule>(rt->plugins.lr_schedule(type));
    const kiln::abi::Config checked = schedule->type->schema.make(config, n_config);
    const kiln_lr_schedule_type& t = schedule->type->type;
    if (t.create)
      kiln::abi::check_plugin_call(t.create(t.user, checked.data(), checked.size(), &schedule->state), schedule->who);
    *out = schedule.release();
  });
}

void kiln_lr_schedule_release(kiln_lr_schedule* s) { delete s; }

kiln_status kiln_lr_schedule_lr(const kiln_lr_schedule* s, int64_t step, double base_lr, double* out) {
  KILN_REQUIRE(s, out);
  return guarded(__func__, [&] {
    KILN_CHECK(step >= 0, kiln::Status::invalid_argument, s->who, ": step is ", step, "; steps count from 0");
    const kiln_lr_schedule_type& t = s->type->type;
    KILN_CHECK(t.lr != nullptr, kiln::Status::unsupported, s->who, " has no lr function");
    double lr = 0.0;
    kiln::abi::check_plugin_call(t.lr(s->state, step, base_lr, &lr), s->who);
    *out = lr;
  });
}

}  // extern "C"

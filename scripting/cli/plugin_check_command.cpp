// kiln plugin-check: the conformance checks a plugin author runs on a
// plugin library, loaded alone: what it exports, and for each op and layer
// type it registers, gradients against finite differences, a GPU against
// the CPU, and weights save/load round trips.
#include <cstdio>
#include <optional>
#include <string>

#include "command.hpp"
#include "elf_exports.hpp"
#include "kiln/kiln_plugin.h"
#include "registration_checks.hpp"
#include "registrations.hpp"

namespace kiln::cli {
namespace {

struct Options {
  std::optional<std::string> device;  // as given: "cpu" or "cuda:N"
  std::string library;
};

// The options and the library, or the exit code of the usage error.
std::optional<Options> parse(const Command& self, Args args, int* code) {
  Options options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--device" || arg.starts_with("--device=")) {
      if (arg == "--device" && i + 1 == args.size())
        return *code = usage_error(self, "--device needs a value"), std::nullopt;
      options.device = std::string(arg == "--device" ? args[++i] : arg.substr(std::string_view("--device=").size()));
    } else if (arg.starts_with("-")) {
      return *code = usage_error(self, "unknown option '" + std::string(arg) + "'"), std::nullopt;
    } else if (!options.library.empty()) {
      return *code = usage_error(self, "takes one library, got a second: '" + std::string(arg) + "'"), std::nullopt;
    } else {
      options.library = arg;
    }
  }
  if (options.library.empty()) return *code = usage_error(self, "missing the plugin library to check"), std::nullopt;
  return options;
}

// The GPU to compare against the CPU: the one asked for, else cuda:0 when
// there is one. nullopt after reporting a device that does not exist.
std::optional<DeviceTarget> resolve_device(const Command& self, kiln_runtime* rt,
                                           const std::optional<std::string>& asked, int* code) {
  int count = 0;
  const char* reason = "";
  kiln_devices_get(rt, &count, &reason);
  DeviceTarget target;
  if (asked == "cpu") {
    target.skipped_because = "--device cpu: the CPU alone is checked";
    return target;
  }
  if (asked) {
    const std::string digits = asked->starts_with("cuda:") ? asked->substr(5) : "";
    if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos)
      return *code = usage_error(self, "--device expects cpu or cuda:N, got '" + *asked + "'"), std::nullopt;
    target.index = std::stoi(digits);
    if (target.index >= count) {
      std::fprintf(stderr, "kiln %s: no device %s: %s\n", self.name, asked->c_str(),
                   count == 0 ? reason : (std::to_string(count) + " GPU(s) found").c_str());
      return *code = kExitUsage, std::nullopt;
    }
    target.enabled = true;
    return target;
  }
  target.enabled = count > 0;
  target.skipped_because = std::string("no GPU: ") + reason;
  return target;
}

Outcome check_exports(const std::string& library) {
  std::string error;
  const auto symbols = elf_exported_symbols(library, &error);
  if (!symbols) return {Verdict::kFail, error};
  std::string others;
  bool has_entry = false;
  for (const std::string& s : *symbols) {
    if (s == KILN_PLUGIN_ENTRY_SYMBOL) has_entry = true;
    else others += (others.empty() ? "" : ", ") + s;
  }
  if (!others.empty()) return {Verdict::kFail, "exports more than " KILN_PLUGIN_ENTRY_SYMBOL ": " + others};
  if (!has_entry) return {Verdict::kFail, "does not export " KILN_PLUGIN_ENTRY_SYMBOL};
  return {Verdict::kPass, "exports " KILN_PLUGIN_ENTRY_SYMBOL " alone"};
}

}  // namespace

int plugin_check_command(const Command& self, Args args) {
  int code = kExitOk;
  const auto options = parse(self, args, &code);
  if (!options) return code;
  kiln_runtime_options runtime_options{};
  runtime_options.size = sizeof runtime_options;
  runtime_options.skip_default_plugins = 1;
  const RuntimePtr rt = open_runtime(self, &runtime_options);
  if (!rt) return kExitFailure;
  if (kiln_plugin_load(rt.get(), options->library.c_str()) != KILN_OK) {
    std::fprintf(stderr, "kiln %s: %s\n", self.name, kiln_last_error());
    return kExitUsage;
  }
  const auto device = resolve_device(self, rt.get(), options->device, &code);
  if (!device) return code;
  kiln_plugin_info info{};
  info.size = sizeof info;
  Registrations registrations;
  if (kiln_plugin_info_get(rt.get(), 0, &info) != KILN_OK ||
      !collect_registrations(rt.get(), 0, info.num_registrations, &registrations))
    return library_failure(self, "cannot read what the plugin registers");
  std::printf("%s %s\n  file: %s\n", info.name, info.version, info.path);
  print_registrations(registrations);

  CheckReport report;
  report.record("library", "exported symbols", check_exports(options->library));
  check_ops(rt.get(), registrations[KILN_REG_OP], *device, &report);
  check_layers(rt.get(), registrations[KILN_REG_LAYER], *device, &report);
  for (const auto& [kind, names] : registrations) {
    if (kind == KILN_REG_OP || kind == KILN_REG_LAYER) continue;
    for (const std::string& name : names)
      report.record(std::string(kiln_registration_kind_name(kind)) + " " + name, "conformance",
                    {Verdict::kSkip, "plugin-check checks ops and layers only"});
  }
  return report.print_summary() ? kExitOk : kExitFailure;
}

}  // namespace kiln::cli

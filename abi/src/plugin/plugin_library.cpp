// Mapping a plugin library with Boost.DLL and reading its descriptor. The
// code of one file is mapped once per process however many runtimes load
// it (the dynamic loader shares it anyway), so the host tables handed to the
// plugin live with that mapping: a plugin keeps the last table in a static.
#include "plugin/plugin_library.hpp"

#include <dlfcn.h>

#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "kiln/error.hpp"
#include "plugin/host_table.hpp"

namespace kiln::abi {

// The code of one library file, mapped RTLD_LOCAL, with every host table
// given to it. Members go in reverse order: the code is unmapped before the
// tables it may point to are freed.
struct MappedCode {
  std::mutex mutex;
  std::vector<std::unique_ptr<kiln_host>> host_tables;
  boost::dll::shared_library library;
};

namespace {

// The host speaks every minor version of its major, from 1.0 up.
constexpr uint32_t kHostAbiMin = KILN_PLUGIN_ABI(1, 0);
constexpr uint32_t kHostAbiMax = KILN_PLUGIN_ABI_CURRENT;

// Mapped files by the dynamic loader's handle, so that two loads of one file
// share their MappedCode. Weak: a mapping goes when its last load does.
std::mutex mapped_mutex;
std::map<void*, std::weak_ptr<MappedCode>> mapped_by_handle;

[[noreturn]] void refuse_path(const std::string& path, const std::string& reason) {
  throw_error(Status::plugin_refused, str_cat(path, ": ", reason));
}

std::shared_ptr<MappedCode> map_library(const std::string& path) {
  std::error_code exists_error;
  if (!std::filesystem::exists(path, exists_error)) refuse_path(path, "no such file");
  // RTLD_LOCAL: the plugin's symbols (its own copy of a library, say) never
  // bind another plugin's references; RTLD_NOW: a missing symbol refuses the
  // plugin here instead of failing in the middle of a call later.
  boost::dll::shared_library library;
  std::error_code error;
  library.load(path, boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now, error);
  if (error) {
    // Boost reports a generic error code; the dynamic loader's message says why.
    const char* why = dlerror();
    refuse_path(path, str_cat("not a shared library: ", why ? why : error.message()));
  }
  std::lock_guard lock(mapped_mutex);
  std::weak_ptr<MappedCode>& slot = mapped_by_handle[library.native()];
  if (std::shared_ptr<MappedCode> existing = slot.lock()) return existing;  // `library` drops its extra reference
  void* const handle = library.native();
  auto code = std::shared_ptr<MappedCode>(new MappedCode, [handle](MappedCode* c) {
    std::lock_guard lock(mapped_mutex);
    auto it = mapped_by_handle.find(handle);
    if (it != mapped_by_handle.end() && it->second.expired()) mapped_by_handle.erase(it);
    delete c;
  });
  code->library = std::move(library);
  slot = code;
  return code;
}

const kiln_plugin_descriptor* call_entry(const std::string& path, const boost::dll::shared_library& library) {
  if (!library.has(KILN_PLUGIN_ENTRY_SYMBOL)) refuse_path(path, "does not export " KILN_PLUGIN_ENTRY_SYMBOL);
  const auto entry = library.get<const kiln_plugin_descriptor*()>(KILN_PLUGIN_ENTRY_SYMBOL);
  const kiln_plugin_descriptor* d = entry();
  if (!d) refuse_path(path, KILN_PLUGIN_ENTRY_SYMBOL " returned NULL instead of a descriptor");
  if (d->size < sizeof(kiln_plugin_descriptor))
    refuse_path(path, str_cat("its descriptor is ", d->size, " bytes, at least ", sizeof(kiln_plugin_descriptor),
                              " expected (set size to sizeof(kiln_plugin_descriptor))"));
  if (!d->name || !*d->name) refuse_path(path, "its descriptor has no name");
  if (!d->version) refuse_path(path, str_cat("plugin '", d->name, "': its descriptor has no version"));
  if (!d->register_fn) refuse_path(path, str_cat("plugin '", d->name, "': its descriptor has no register_fn"));
  if (d->abi_min > d->abi_max)
    refuse_path(path, str_cat("plugin '", d->name, "': its ABI range is empty (abi_min ", abi_text(d->abi_min, d->abi_min),
                              " is above abi_max ", abi_text(d->abi_max, d->abi_max), ")"));
  return d;
}

}  // namespace

std::string abi_text(uint32_t min, uint32_t max) {
  auto one = [](uint32_t v) { return str_cat(KILN_PLUGIN_ABI_MAJOR(v), ".", KILN_PLUGIN_ABI_MINOR(v)); };
  return min == max ? one(min) : str_cat(one(min), " to ", one(max));
}

std::shared_ptr<PluginLibrary> PluginLibrary::open(const std::string& path) {
  std::shared_ptr<PluginLibrary> lib(new PluginLibrary);
  lib->path_ = path;
  lib->code_ = map_library(path);
  const kiln_plugin_descriptor* d = call_entry(path, lib->code_->library);
  // The highest version both sides speak; checked before register_fn runs.
  const uint32_t low = std::max(d->abi_min, kHostAbiMin), high = std::min(d->abi_max, kHostAbiMax);
  if (low > high)
    refuse_path(path, str_cat("plugin '", d->name, "' (", path, ") needs ABI ", abi_text(d->abi_min, d->abi_max),
                              ", host has ", abi_text(kHostAbiMin, kHostAbiMax)));
  lib->name_ = d->name;
  lib->version_ = d->version;
  lib->abi_version_ = high;
  lib->register_fn_ = d->register_fn;
  return lib;
}

PluginLibrary::~PluginLibrary() = default;

const kiln_host* PluginLibrary::host_table(kiln_runtime* rt) const {
  auto table = std::make_unique<kiln_host>(make_host_table(rt, abi_version_));
  std::lock_guard lock(code_->mutex);
  code_->host_tables.push_back(std::move(table));
  return code_->host_tables.back().get();
}

void PluginLibrary::refuse(const std::string& reason) const { refuse_path(path_, reason); }

}  // namespace kiln::abi

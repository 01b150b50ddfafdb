// The plugin search: explicit paths, KILN_PLUGIN_PATH, then the folder
// beside libkiln.so (found with dladdr, so it works from the build tree and
// from an install alike).
#include "plugin/plugin_search.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "convert.hpp"
#include "kiln/error.hpp"

namespace kiln::abi {
namespace {

namespace fs = std::filesystem;

// The lib*.so files of `folder`, sorted; none when it does not exist.
std::vector<std::string> libraries_in(const fs::path& folder) {
  std::vector<std::string> out;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, error)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("lib") && name.ends_with(".so") && !e.is_directory(error)) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file as itself, a folder as its libraries. A path that does not exist
// stays, so that loading it reports it.
void add_path(std::vector<std::string>& out, const std::string& path) {
  std::error_code error;
  if (!fs::is_directory(path, error)) {
    out.push_back(path);
    return;
  }
  for (std::string& lib : libraries_in(path)) out.push_back(std::move(lib));
}

void add_environment_folders(std::vector<std::string>& out) {
  const char* value = std::getenv("KILN_PLUGIN_PATH");
  std::string_view rest = value ? value : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view folder = rest.substr(0, colon);
    if (!folder.empty())
      for (std::string& lib : libraries_in(fs::path(folder))) out.push_back(std::move(lib));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
}

// <folder of libkiln.so>/kiln/plugins.
fs::path install_plugin_folder() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&kiln_runtime_create), &info) || !info.dli_fname) return {};
  return fs::path(info.dli_fname).parent_path() / "kiln" / "plugins";
}

}  // namespace

std::vector<std::string> plugin_candidates(const kiln_runtime_options* options) {
  std::vector<std::string> out;
  if (options && KILN_HAS_FIELD(options, n_plugin_paths)) {
    KILN_CHECK(options->plugin_paths || options->n_plugin_paths == 0, Status::invalid_argument,
               "kiln_runtime_options.plugin_paths is NULL with n_plugin_paths ", options->n_plugin_paths);
    for (size_t i = 0; i < options->n_plugin_paths; ++i)
      if (options->plugin_paths[i]) add_path(out, options->plugin_paths[i]);
  }
  if (options && KILN_HAS_FIELD(options, skip_default_plugins) && options->skip_default_plugins) return out;
  add_environment_folders(out);
  const fs::path install = install_plugin_folder();
  if (!install.empty())
    for (std::string& lib : libraries_in(install)) out.push_back(std::move(lib));
  return out;
}

}  // namespace kiln::abi

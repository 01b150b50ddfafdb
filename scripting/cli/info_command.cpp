// kiln info and kiln version: what this installation is and what it finds.
#include <cstdio>
#include <cstring>
#include <thread>

#include "command.hpp"

// The version macros as string literals (two steps, so the macros expand first).
#define KILN_CLI_TEXT_(x) #x
#define KILN_CLI_TEXT(x) KILN_CLI_TEXT_(x)

namespace kiln::cli {
namespace {

// The library that answers may differ from the header this was built with.
void print_version() {
  std::printf("kiln %s\n", kiln_version());
  constexpr const char* kHeaderVersion = KILN_CLI_TEXT(KILN_VERSION_MAJOR) "." KILN_CLI_TEXT(
      KILN_VERSION_MINOR) "." KILN_CLI_TEXT(KILN_VERSION_PATCH);
  if (std::strcmp(kHeaderVersion, kiln_version()) != 0)
    std::printf("warning: the kiln executable was built against kiln.h %s, but libkiln is %s\n", kHeaderVersion,
                kiln_version());
}

const char* on_off(int flag) { return flag ? "on" : "off"; }

void print_build(const kiln_build_info& build) {
  std::printf("build: %s, %s, CUDA %s, NCCL %s\n", build.build_type, build.compiler, on_off(build.with_cuda),
              on_off(build.with_nccl));
  std::printf("libraries:\n");
  std::printf("  oneDNN        %s\n", build.onednn_version);
  std::printf("  CUDA runtime  %s\n", build.cuda_runtime_version);
  std::printf("  cuBLAS        %s\n", build.cublas_version);
  std::printf("  cuDNN         %s\n", build.cudnn_version);
  std::printf("  NCCL          %s\n", build.nccl_version);
}

int print_devices(const Command& self, kiln_runtime* rt) {
  int cuda_count = 0;
  const char* reason = nullptr;
  if (kiln_devices_get(rt, &cuda_count, &reason) != KILN_OK) return library_failure(self, "cannot list the devices");
  std::printf("devices:\n  cpu           %u hardware threads\n", std::thread::hardware_concurrency());
  if (cuda_count > 0)
    std::printf("  cuda          %d GPU%s (cuda:0 .. cuda:%d)\n", cuda_count, cuda_count == 1 ? "" : "s",
                cuda_count - 1);
  else
    std::printf("  cuda          none: %s\n", reason);
  return kExitOk;
}

}  // namespace

int version_command(const Command& self, Args args) {
  if (const int code = check_no_arguments(self, args); code != kExitOk) return code;
  print_version();
  return kExitOk;
}

int info_command(const Command& self, Args args) {
  if (const int code = check_no_arguments(self, args); code != kExitOk) return code;
  kiln_build_info build{};
  build.size = sizeof build;
  if (kiln_build_info_get(&build) != KILN_OK) return library_failure(self, "cannot read the build information");
  print_version();
  print_build(build);
  const RuntimePtr rt = open_runtime(self, nullptr);
  if (!rt) return kExitFailure;
  if (const int code = print_devices(self, rt.get()); code != kExitOk) return code;
  size_t plugins = 0;
  if (kiln_plugin_count(rt.get(), &plugins) != KILN_OK) return library_failure(self, "cannot count the plugins");
  std::printf("plugins: %zu loaded (kiln plugins lists them)\n", plugins);
  return kExitOk;
}

}  // namespace kiln::cli

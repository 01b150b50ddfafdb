// What a host can ask about the library itself: how it was built, the
// versions of the libraries it runs on, and the devices a runtime found.
// `kiln info` prints these.
#include <oneapi/dnnl/dnnl.h>

#include <string>

#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/dist/process_group.hpp"
#include "kiln/memory/cuda.hpp"

#if KILN_WITH_CUDA
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#endif

using kiln::abi::guarded;

// Set on this file by abi/CMakeLists.txt; a build outside CMake knows neither.
#ifndef KILN_BUILD_TYPE
#define KILN_BUILD_TYPE "unknown"
#endif
#ifndef KILN_BUILT_WITH_NCCL
#define KILN_BUILT_WITH_NCCL 0
#endif

namespace {

constexpr const char* kNotBuilt = "not built";

const char* compiler_text() {
#if defined(__clang__)
  return "Clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " __VERSION__;
#else
  return "unknown compiler";
#endif
}

// The oneDNN library actually loaded, which may be newer than the headers.
const char* onednn_version_text() {
  static const std::string text = [] {
    const dnnl_version_t* v = dnnl_version();
    std::string s = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    if (v->hash && *v->hash && std::string(v->hash) != "N/A") s += std::string(" (commit ") + v->hash + ")";
    return s;
  }();
  return text.c_str();
}

// CUDA encodes versions as 1000 * major + 10 * minor.
#if KILN_WITH_CUDA
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}
#endif

const char* cuda_runtime_version_text() {
#if KILN_WITH_CUDA
  static const std::string text = [] {
    int version = 0;
    if (cudaRuntimeGetVersion(&version) != cudaSuccess) {
      cudaGetLastError();  // a failed probe must not surface in a later, unrelated check
      return std::string("unknown (the CUDA runtime did not say)");
    }
    return cuda_version_text(version);
  }();
  return text.c_str();
#else
  return kNotBuilt;
#endif
}

// cuBLASLt and cuDNN 9 encode versions as 10000 * major + 100 * minor + patch.
#if KILN_WITH_CUDA
std::string library_version_text(size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}
#endif

// The versions of the libraries actually loaded, which may be newer than the headers.
const char* cublas_version_text() {
#if KILN_WITH_CUDA
  static const std::string text = library_version_text(cublasLtGetVersion());
  return text.c_str();
#else
  return kNotBuilt;
#endif
}

const char* cudnn_version_text() {
#if KILN_WITH_CUDA
  static const std::string text = library_version_text(cudnnGetVersion());
  return text.c_str();
#else
  return kNotBuilt;
#endif
}

}  // namespace

extern "C" {

kiln_status kiln_build_info_get(kiln_build_info* out) {
  KILN_REQUIRE(out);
  return guarded(__func__, [&] {
    kiln::abi::check_struct_size(out->size, "kiln_build_info");
    if (KILN_HAS_FIELD(out, version)) out->version = kiln_version();
    if (KILN_HAS_FIELD(out, with_cuda)) out->with_cuda = kiln::built_with_cuda() ? 1 : 0;
    if (KILN_HAS_FIELD(out, with_nccl)) out->with_nccl = KILN_BUILT_WITH_NCCL;
    if (KILN_HAS_FIELD(out, compiler)) out->compiler = compiler_text();
    if (KILN_HAS_FIELD(out, build_type)) out->build_type = KILN_BUILD_TYPE;
    if (KILN_HAS_FIELD(out, onednn_version)) out->onednn_version = onednn_version_text();
    if (KILN_HAS_FIELD(out, cuda_runtime_version)) out->cuda_runtime_version = cuda_runtime_version_text();
    if (KILN_HAS_FIELD(out, cublas_version)) out->cublas_version = cublas_version_text();
    if (KILN_HAS_FIELD(out, cudnn_version)) out->cudnn_version = cudnn_version_text();
    if (KILN_HAS_FIELD(out, nccl_version)) {
      const char* nccl = kiln::dist::nccl_version();
      out->nccl_version = nccl ? nccl : kNotBuilt;
    }
  });
}

kiln_status kiln_devices_get(kiln_runtime* rt, int* cuda_count, const char** cuda_unavailable_reason) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] {
    const kiln::DeviceInventory& devices = rt->runtime.devices();
    if (cuda_count) *cuda_count = devices.cuda_device_count;
    if (cuda_unavailable_reason) *cuda_unavailable_reason = devices.cuda_unavailable_reason.c_str();
  });
}

}  // extern "C"

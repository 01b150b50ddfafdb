#include "cublas_matmul.hpp"

#include <bit>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "../../memory/cuda/device_guard.hpp"
#include "cublas_error.hpp"
#include "handle_cache.hpp"
#include "matmul_bias_rows.hpp"
#include "stream.hpp"

namespace kiln::cuda {
namespace {

// cuBLASLt picks from kernels using up to this much scratch memory.
constexpr size_t kMaxWorkspaceBytes = size_t(32) << 20;
// The epilogue reads the bias with vector loads.
constexpr uint32_t kBiasAlignment = 16;

template <class T>
using LtPtr = std::unique_ptr<std::remove_pointer_t<T>, cublasStatus_t (*)(T)>;
using MatmulDesc = LtPtr<cublasLtMatmulDesc_t>;
using MatrixLayout = LtPtr<cublasLtMatrixLayout_t>;
using Preference = LtPtr<cublasLtMatmulPreference_t>;

// Everything a plan depends on: the heuristic's choice varies with shapes,
// strides, alignment and the GPU.
struct PlanKey {
  int device;
  DType dtype;
  bool tf32;
  bool fuse_bias;
  nn::LinearActivation activation;  // to fuse: none when the bias cannot be
  bool a_transposed, b_transposed;
  int64_t m, n, k, batch;
  int64_t lda, ldb, stride_a, stride_b;
  uint32_t align_a, align_b, align_d;
  auto operator<=>(const PlanKey&) const = default;
};

struct Plan {
  MatmulDesc desc{nullptr, cublasLtMatmulDescDestroy};
  MatrixLayout a{nullptr, cublasLtMatrixLayoutDestroy};
  MatrixLayout b{nullptr, cublasLtMatrixLayoutDestroy};
  MatrixLayout d{nullptr, cublasLtMatrixLayoutDestroy};
  cublasLtMatmulAlgo_t algo{};
  size_t workspace_bytes = 0;
  bool bias_fused = false;
  bool activation_fused = false;
};

cudaDataType_t data_type(DType t) {
  switch (t) {
    case DType::f64: return CUDA_R_64F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

cublasComputeType_t compute_type(DType t, bool tf32) {
  if (t == DType::f64) return CUBLAS_COMPUTE_64F;
  return t == DType::f32 && tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// The largest power of two the address is a multiple of, up to 256 (what
// cuBLASLt assumes unless told otherwise).
uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  return address == 0 ? 256u : uint32_t(std::min<uintptr_t>(uintptr_t(1) << std::countr_zero(address), 256));
}

std::string describe(const PlanKey& k) {
  return str_cat(dtype_name(k.dtype), " [", k.m, " x ", k.k, "] @ [", k.k, " x ", k.n, "] (column-major, op(a) ",
                 k.a_transposed ? "T" : "N", ", op(b) ", k.b_transposed ? "T" : "N", ", batch ", k.batch, ") on cuda:",
                 k.device);
}

template <class Value>
void set_attr(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const Value& value, const PlanKey& k) {
  KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value), "cublasLtMatmulDescSetAttribute(",
                    int(attr), ") for ", describe(k));
}

template <class Value>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const Value& value,
              const PlanKey& k) {
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof value),
                    "cublasLtMatmulPreferenceSetAttribute(", int(attr), ") for ", describe(k));
}

MatrixLayout make_layout(const PlanKey& k, int64_t rows, int64_t cols, int64_t ld, int64_t batch_stride) {
  cublasLtMatrixLayout_t raw = nullptr;
  KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&raw, data_type(k.dtype), uint64_t(rows), uint64_t(cols), ld),
                    "cublasLtMatrixLayoutCreate for ", describe(k));
  MatrixLayout layout(raw, cublasLtMatrixLayoutDestroy);
  if (k.batch > 1) {
    const int32_t count = int32_t(k.batch);
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(raw, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
                      "setting the batch count of ", describe(k));
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(raw, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                                       sizeof batch_stride),
                      "setting the batch stride of ", describe(k));
  }
  return layout;
}

// The epilogue that adds the bias (when `bias`) and applies `activation`.
cublasLtEpilogue_t epilogue_for(bool bias, nn::LinearActivation activation) {
  switch (activation) {
    case nn::LinearActivation::relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case nn::LinearActivation::gelu_tanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case nn::LinearActivation::none: break;
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

// The heuristic's best algorithm for the plan as described so far, if any.
bool find_algorithm(cublasLtHandle_t handle, Plan& plan, cublasLtMatmulPreference_t pref) {
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle, plan.desc.get(), plan.a.get(), plan.b.get(),
                                                               plan.d.get(), plan.d.get(), pref, 1, &result, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) return false;
  plan.algo = result.algo;
  plan.workspace_bytes = result.workspaceSize;
  return true;
}

// Describes the plan with this epilogue; true when an algorithm has it.
bool try_epilogue(cublasLtHandle_t handle, Plan& plan, cublasLtMatmulPreference_t pref, const PlanKey& k, bool bias,
                  nn::LinearActivation activation) {
  set_attr(plan.desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue_for(bias, activation), k);
  if (!find_algorithm(handle, plan, pref)) return false;
  plan.bias_fused = bias;
  plan.activation_fused = activation != nn::LinearActivation::none;
  return true;
}

std::unique_ptr<Plan> make_plan(cublasLtHandle_t handle, const PlanKey& k) {
  auto plan = std::make_unique<Plan>();
  cublasLtMatmulDesc_t desc = nullptr;
  const cudaDataType_t scale = k.dtype == DType::f64 ? CUDA_R_64F : CUDA_R_32F;
  KILN_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, compute_type(k.dtype, k.tf32), scale),
                    "cublasLtMatmulDescCreate for ", describe(k));
  plan->desc.reset(desc);
  set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, k.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, k);
  set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, k.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, k);
  plan->a = k.a_transposed ? make_layout(k, k.k, k.m, k.lda, k.stride_a) : make_layout(k, k.m, k.k, k.lda, k.stride_a);
  plan->b = k.b_transposed ? make_layout(k, k.n, k.k, k.ldb, k.stride_b) : make_layout(k, k.k, k.n, k.ldb, k.stride_b);
  plan->d = make_layout(k, k.m, k.n, k.m, k.m * k.n);

  cublasLtMatmulPreference_t raw_pref = nullptr;
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&raw_pref), "cublasLtMatmulPreferenceCreate for ", describe(k));
  const Preference pref(raw_pref, cublasLtMatmulPreferenceDestroy);
  set_pref(raw_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kMaxWorkspaceBytes), k);
  set_pref(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, k.align_a, k);
  set_pref(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, k.align_b, k);
  set_pref(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, k.align_d, k);
  set_pref(raw_pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, k.align_d, k);

  // Not every dtype has a kernel for every epilogue: the most fused one
  // found is taken. Without the bias in it, the bias is written first and
  // the product added to it; without the activation, the caller applies it.
  const nn::LinearActivation none = nn::LinearActivation::none;
  if (k.activation != none && try_epilogue(handle, *plan, raw_pref, k, k.fuse_bias, k.activation)) return plan;
  if (k.fuse_bias && try_epilogue(handle, *plan, raw_pref, k, true, none)) return plan;
  KILN_CHECK(try_epilogue(handle, *plan, raw_pref, k, false, none), Status::unsupported,
             "cuBLASLt has no algorithm for ", describe(k));
  return plan;
}

// Plans live until exit: one per distinct problem, and a model has few.
Plan& plan_for(cublasLtHandle_t handle, const PlanKey& key) {
  static std::mutex mutex;
  static std::map<PlanKey, std::unique_ptr<Plan>> plans;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, make_plan(handle, key)).first;
  return *it->second;
}

// Runs one cuBLASLt call; returns whether it applied g.activation.
bool run_chunk(Runtime& rt, int device, const Gemm& g, cublasLtHandle_t handle) {
  const bool fuse_bias = g.bias != nullptr && alignment_of(g.bias) >= kBiasAlignment;
  // A bias written first reaches the epilogue as beta * C, and cuBLASLt does
  // not promise that its activation sees that term: the activation is fused
  // only with the bias, or without any.
  const bool bias_unaligned = g.bias != nullptr && !fuse_bias;
  const PlanKey key{device,
                    g.dtype,
                    rt.options().allow_tf32,
                    fuse_bias,
                    bias_unaligned ? nn::LinearActivation::none : g.activation,
                    g.a.transposed,
                    g.b.transposed,
                    g.m,
                    g.n,
                    g.k,
                    g.batch,
                    g.a.ld,
                    g.b.ld,
                    g.batch > 1 ? g.a.batch_stride : 0,
                    g.batch > 1 ? g.b.batch_stride : 0,
                    alignment_of(g.a.data),
                    alignment_of(g.b.data),
                    alignment_of(g.d)};
  Plan& plan = plan_for(handle, key);
  const bool add_to_bias = g.bias != nullptr && !plan.bias_fused;
  // The descriptor is shared by every call of this shape; the handle lease
  // held by the caller keeps the bias pointer ours until the call is queued.
  if (plan.bias_fused) set_attr(plan.desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias, key);
  if (add_to_bias)
    fill_rows_with_bias(device, g.d, g.bias, dtype_size(g.dtype), g.batch * g.n, g.m);
  const float alpha32 = 1.0f, beta32 = add_to_bias ? 1.0f : 0.0f;
  const double alpha64 = 1.0, beta64 = add_to_bias ? 1.0 : 0.0;
  const bool f64 = g.dtype == DType::f64;
  DataPtr workspace;
  if (plan.workspace_bytes > 0) workspace = rt.allocator(Device::cuda(device))->allocate(plan.workspace_bytes);
  KILN_CUBLAS_CHECK(cublasLtMatmul(handle, plan.desc.get(), f64 ? static_cast<const void*>(&alpha64) : &alpha32,
                                   g.a.data, plan.a.get(), g.b.data, plan.b.get(),
                                   f64 ? static_cast<const void*>(&beta64) : &beta32, g.d, plan.d.get(), g.d,
                                   plan.d.get(), &plan.algo, workspace.get(), plan.workspace_bytes,
                                   compute_stream(device)),
                    "cublasLtMatmul for ", describe(key));
  return g.activation == nn::LinearActivation::none || plan.activation_fused;
}

}  // namespace

bool cublaslt_gemm(Runtime& rt, int device, const Gemm& g) {
  CudaDeviceGuard guard(device);
  const HandleLease<cublasLtHandle_t> handle = cublaslt_handle(device);
  // cuBLASLt counts a batch in 32 bits.
  constexpr int64_t kMaxBatch = std::numeric_limits<int32_t>::max();
  if (g.batch <= kMaxBatch) return run_chunk(rt, device, g, handle.get());
  // Split, the chunks could be planned with and without the activation; all
  // leave it to the caller, so that the whole output is treated one way.
  const size_t element = dtype_size(g.dtype);
  for (int64_t first = 0; first < g.batch; first += kMaxBatch) {
    Gemm chunk = g;
    chunk.activation = nn::LinearActivation::none;
    chunk.batch = std::min(kMaxBatch, g.batch - first);
    chunk.a.data = static_cast<const char*>(g.a.data) + size_t(first * g.a.batch_stride) * element;
    chunk.b.data = static_cast<const char*>(g.b.data) + size_t(first * g.b.batch_stride) * element;
    chunk.d = static_cast<char*>(g.d) + size_t(first * g.m * g.n) * element;
    run_chunk(rt, device, chunk, handle.get());
  }
  return g.activation == nn::LinearActivation::none;
}

}  // namespace kiln::cuda

// A build without NCCL: GPU tensors have no collective backend.
#include "backend.hpp"
#include "kiln/error.hpp"

namespace kiln::dist {

const char* nccl_version() { return nullptr; }

std::unique_ptr<Backend> make_nccl_backend(const ProcessGroupOptions&, Store&, const std::string&) {
  throw_error(Status::unsupported,
              "this kiln was built without NCCL (configure with the CUDA Toolkit's NCCL present and "
              "-DKILN_WITH_NCCL=ON); CPU tensors use the gloo backend");
}

}  // namespace kiln::dist

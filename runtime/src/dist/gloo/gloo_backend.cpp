// The Gloo backend: CPU tensors over TCP. Collectives use Gloo's algorithms
// with kiln's own reduction functions (so every kiln dtype reduces, bf16
// included); send and recv use Gloo's unbound buffers, which may be started
// from any thread.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include <cstddef>
#include <csignal>
#include <cstring>
#include <mutex>
#include <unistd.h>
#include <vector>

#include "../backend.hpp"
#include "../reductions.hpp"
#include "gloo_store.hpp"
#include "kiln/error.hpp"

namespace kiln::dist {
namespace {

// Gloo's collectives use slot prefixes 0x01-0x08; point to point takes its own.
constexpr uint8_t kPointToPointSlotPrefix = 0x7f;

// Gloo sizes its buffers from the element type; kiln's reduction functions
// know the real one, so any type of the right width will do.
template <class Options>
void set_buffers(Options& o, DType dtype, void* in, size_t n_in, void* out, size_t n_out) {
  visit_dtype(dtype, [&]<class T>() {
    using Word = std::conditional_t<sizeof(T) == 8, uint64_t,
                 std::conditional_t<sizeof(T) == 4, uint32_t, std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>>;
    // In place: Gloo reads the output when no input is set.
    if (in != out) o.template setInput<Word>(static_cast<Word*>(in), n_in);
    o.template setOutput<Word>(static_cast<Word*>(out), n_out);
  });
}

template <class Options> void set_buffers(Options& o, const Tensor& in, const Tensor& out) {
  set_buffers(o, in.dtype(), in.raw_data(), size_t(in.numel()), out.raw_data(), size_t(out.numel()));
}

// The local address other ranks reach this one at: loopback when the job
// meets on loopback, this host's name otherwise (as Gloo's own default).
std::string device_hostname(const ProcessGroupOptions& options) {
  const std::string& m = options.master_addr;
  if (m == "localhost" || m.rfind("127.", 0) == 0 || m == "::1") return "127.0.0.1";
  char name[256] = {};
  KILN_CHECK(gethostname(name, sizeof name - 1) == 0, Status::io, "gloo: cannot read this host's name");
  return name;
}

// Gloo writes to its sockets with writev, which raises SIGPIPE when a peer's
// process has ended; SIGPIPE's default action would end this rank too,
// instead of Gloo's EPIPE becoming the error that names the peer. Python
// ignores SIGPIPE at start-up, which is why PyTorch never meets this. A
// disposition the host chose itself (a handler, or ignoring) is kept.
void ignore_broken_pipe_signal() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current = {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      struct sigaction ignore = {};
      ignore.sa_handler = SIG_IGN;
      sigemptyset(&ignore.sa_mask);
      sigaction(SIGPIPE, &ignore, nullptr);
    }
  });
}

class GlooBackend final : public Backend {
 public:
  GlooBackend(const ProcessGroupOptions& options, Store& store, const std::string& prefix)
      : options_(options) {
    ignore_broken_pipe_signal();
    gloo::transport::tcp::attr attr(device_hostname(options).c_str());
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.world_size);
    context->setTimeout(options.timeout);
    GlooStore gloo_store(store);
    gloo::rendezvous::PrefixStore prefixed(prefix + "gloo", gloo_store);
    context->connectFullMesh(prefixed, device);
    context_ = std::move(context);
  }

  bool takes(const Tensor& t) const override { return t.device().is_cpu(); }
  const char* name() const override { return "gloo"; }

  void all_reduce(const Tensor& t, ReduceOp op, uint32_t seq) override {
    all_reduce(t.raw_data(), t.dtype(), size_t(t.numel()), op, seq);
  }

  void broadcast(const Tensor& t, int root, uint32_t seq) override {
    gloo::BroadcastOptions o(context_);
    set_buffers(o, t, t);
    o.setRoot(root);
    o.setTag(seq);
    gloo::broadcast(o);
  }

  void all_gather(const Tensor& input, const Tensor& output, uint32_t seq) override {
    gloo::AllgatherOptions o(context_);
    set_buffers(o, input, output);
    o.setTag(seq);
    gloo::allgather(o);
  }

  // Gloo has no reduce-scatter for unbound buffers: all-reduce a copy of the
  // input and keep this rank's part.
  void reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op, uint32_t seq) override {
    // 16-byte words keep every dtype aligned.
    std::vector<std::max_align_t> whole((input.nbytes() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    std::byte* bytes = reinterpret_cast<std::byte*>(whole.data());
    std::memcpy(bytes, input.raw_data(), input.nbytes());
    all_reduce(bytes, input.dtype(), size_t(input.numel()), op, seq);
    std::memcpy(output.raw_data(), bytes + size_t(options_.rank) * output.nbytes(), output.nbytes());
  }

  void barrier(uint32_t seq) override {
    gloo::BarrierOptions o(context_);
    o.setTag(seq);
    gloo::barrier(o);
  }

  std::function<void()> start_send(const Tensor& t, int dst, int tag) override {
    std::shared_ptr<gloo::transport::UnboundBuffer> buffer =
        context_->createUnboundBuffer(t.raw_data(), t.nbytes());
    buffer->send(dst, gloo::Slot::build(kPointToPointSlotPrefix, uint32_t(tag)));
    return [buffer, t, timeout = options_.timeout] { buffer->waitSend(timeout); };
  }

  std::function<void()> start_recv(const Tensor& t, int src, int tag) override {
    std::shared_ptr<gloo::transport::UnboundBuffer> buffer =
        context_->createUnboundBuffer(t.raw_data(), t.nbytes());
    buffer->recv(src, gloo::Slot::build(kPointToPointSlotPrefix, uint32_t(tag)));
    return [buffer, t, timeout = options_.timeout] { buffer->waitRecv(timeout); };
  }

 private:
  void all_reduce(void* data, DType dtype, size_t n, ReduceOp op, uint32_t seq) {
    gloo::AllreduceOptions o(context_);
    set_buffers(o, dtype, data, n, data, n);
    o.setReduceFunction(reduce_function(dtype, op));
    o.setTag(seq);
    gloo::allreduce(o);
    if (op == ReduceOp::mean) divide_in_place(data, dtype, n, options_.world_size);
  }

  ProcessGroupOptions options_;
  std::shared_ptr<gloo::Context> context_;
};

}  // namespace

std::unique_ptr<Backend> make_gloo_backend(const ProcessGroupOptions& options, Store& store,
                                           const std::string& prefix) {
  return std::make_unique<GlooBackend>(options, store, prefix);
}

}  // namespace kiln::dist

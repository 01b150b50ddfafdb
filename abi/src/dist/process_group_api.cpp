// Process groups through the C API.
#include <cmath>

#include "../convert.hpp"
#include "../guard.hpp"
#include "../handles.hpp"
#include "dist_handles.hpp"
#include "kiln/error.hpp"

using kiln::Status;
using kiln::abi::guarded;
using kiln::dist::ProcessGroupOptions;

namespace {

ProcessGroupOptions read_options(const kiln_process_group_options* in) {
  if (in) kiln::abi::check_struct_size(in->size, "kiln_process_group_options");
  ProcessGroupOptions o;
  if (in && KILN_HAS_FIELD(in, world_size) && in->world_size > 0) {
    KILN_CHECK(KILN_HAS_FIELD(in, rank) && in->rank >= 0 && in->rank < in->world_size, Status::invalid_argument,
               "rank ", in->rank, " of ", in->world_size, " ranks (ranks are 0 to world_size - 1)");
    o.rank = in->rank;
    o.world_size = in->world_size;
    o.take_environment_address();
  } else {
    o = ProcessGroupOptions::from_environment();
  }
  if (!in) return o;
  if (KILN_HAS_FIELD(in, backend) && in->backend) o.backend = in->backend;
  if (KILN_HAS_FIELD(in, master_addr) && in->master_addr) o.master_addr = in->master_addr;
  if (KILN_HAS_FIELD(in, master_port) && in->master_port != 0) {
    KILN_CHECK(in->master_port > 0 && in->master_port < 65536, Status::invalid_argument,
               "master_port must be 1 to 65535, got ", in->master_port);
    o.master_port = uint16_t(in->master_port);
  }
  if (KILN_HAS_FIELD(in, timeout_seconds) && in->timeout_seconds != 0) {
    KILN_CHECK(std::isfinite(in->timeout_seconds) && in->timeout_seconds > 0, Status::invalid_argument,
               "timeout_seconds must be positive, got ", in->timeout_seconds);
    o.timeout = kiln::dist::Milliseconds(int64_t(std::ceil(in->timeout_seconds * 1000)));
  }
  if (KILN_HAS_FIELD(in, name) && in->name) o.name = in->name;
  return o;
}

kiln::dist::ReduceOp reduce_op(kiln_reduce_op op) {
  switch (op) {
    case KILN_REDUCE_SUM: return kiln::dist::ReduceOp::sum;
    case KILN_REDUCE_MEAN: return kiln::dist::ReduceOp::mean;
    case KILN_REDUCE_MAX: return kiln::dist::ReduceOp::max;
    case KILN_REDUCE_MIN: return kiln::dist::ReduceOp::min;
  }
  kiln::throw_error(Status::invalid_argument,
                    kiln::str_cat("unknown kiln_reduce_op ", int(op), " (KILN_REDUCE_SUM, _MEAN, _MAX or _MIN)"));
}

// Hands the operation to the caller, or waits for it when `work` is NULL.
void deliver(std::shared_ptr<kiln::dist::Work> w, kiln_work** work) {
  if (!work) {
    w->wait();
    return;
  }
  *work = new kiln_work(std::move(w));
}

}  // namespace

namespace kiln::abi {

kiln_process_group* default_process_group(kiln_runtime* rt) {
  std::lock_guard lock(rt->dist_mutex);
  if (!rt->default_group) {
    rt->default_group = new kiln_process_group(
        dist::ProcessGroup::create(rt->runtime, ProcessGroupOptions::from_environment()), nullptr);
  }
  return rt->default_group;
}

}  // namespace kiln::abi

extern "C" {

kiln_status kiln_dist_job(int* in_job, int* rank, int* world_size) {
  return guarded(__func__, [&] {
    const bool job = ProcessGroupOptions::environment_has_job();
    const ProcessGroupOptions o = job ? ProcessGroupOptions::from_environment() : ProcessGroupOptions{};
    if (in_job) *in_job = job ? 1 : 0;
    if (rank) *rank = o.rank;
    if (world_size) *world_size = o.world_size;
  });
}

kiln_status kiln_process_group_create(kiln_runtime* rt, const kiln_process_group_options* options,
                                      kiln_process_group** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    *out = new kiln_process_group(kiln::dist::ProcessGroup::create(rt->runtime, read_options(options)), rt);
  });
}

kiln_status kiln_process_group_default(kiln_runtime* rt, kiln_process_group** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    kiln_process_group* pg = kiln::abi::default_process_group(rt);
    kiln_process_group_retain(pg);
    *out = pg;
  });
}

void kiln_process_group_retain(kiln_process_group* pg) {
  if (pg) pg->refs.fetch_add(1, std::memory_order_relaxed);
}

void kiln_process_group_release(kiln_process_group* pg) {
  if (pg && pg->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete pg;
}

kiln_status kiln_process_group_rank(const kiln_process_group* pg, int* rank, int* world_size) {
  KILN_REQUIRE(pg, rank, world_size);
  *rank = pg->group->rank();
  *world_size = pg->group->size();
  return KILN_OK;
}

const char* kiln_process_group_backend(const kiln_process_group* pg) {
  if (!pg) return "";
  return pg->group->options().backend == "nccl" ? "nccl" : "gloo";
}

kiln_status kiln_process_group_all_reduce(kiln_process_group* pg, kiln_tensor* t, kiln_reduce_op op,
                                          kiln_work** work) {
  KILN_REQUIRE(pg, t);
  return guarded(__func__, [&] { deliver(pg->group->all_reduce(t->tensor, reduce_op(op)), work); });
}

kiln_status kiln_process_group_broadcast(kiln_process_group* pg, kiln_tensor* t, int root, kiln_work** work) {
  KILN_REQUIRE(pg, t);
  return guarded(__func__, [&] { deliver(pg->group->broadcast(t->tensor, root), work); });
}

kiln_status kiln_process_group_all_gather(kiln_process_group* pg, const kiln_tensor* input, kiln_tensor* output,
                                          kiln_work** work) {
  KILN_REQUIRE(pg, input, output);
  return guarded(__func__, [&] { deliver(pg->group->all_gather(input->tensor, output->tensor), work); });
}

kiln_status kiln_process_group_reduce_scatter(kiln_process_group* pg, const kiln_tensor* input, kiln_tensor* output,
                                              kiln_reduce_op op, kiln_work** work) {
  KILN_REQUIRE(pg, input, output);
  return guarded(__func__,
                 [&] { deliver(pg->group->reduce_scatter(input->tensor, output->tensor, reduce_op(op)), work); });
}

kiln_status kiln_process_group_send(kiln_process_group* pg, const kiln_tensor* t, int dst, int tag,
                                    kiln_work** work) {
  KILN_REQUIRE(pg, t);
  return guarded(__func__, [&] { deliver(pg->group->send(t->tensor, dst, tag), work); });
}

kiln_status kiln_process_group_recv(kiln_process_group* pg, kiln_tensor* t, int src, int tag, kiln_work** work) {
  KILN_REQUIRE(pg, t);
  return guarded(__func__, [&] { deliver(pg->group->recv(t->tensor, src, tag), work); });
}

kiln_status kiln_process_group_barrier(kiln_process_group* pg, kiln_work** work) {
  KILN_REQUIRE(pg);
  return guarded(__func__, [&] { deliver(pg->group->barrier(), work); });
}

kiln_status kiln_work_wait(kiln_work* work) {
  KILN_REQUIRE(work);
  return guarded(__func__, [&] { work->work->wait(); });
}

kiln_status kiln_work_done(const kiln_work* work, int* done) {
  KILN_REQUIRE(work, done);
  *done = work->work->done() ? 1 : 0;
  return KILN_OK;
}

void kiln_work_release(kiln_work* work) {
  if (!work) return;
  try {
    work->work->wait();
  } catch (...) {
    // Its error was the caller's to collect with kiln_work_wait.
  }
  delete work;
}

}  // extern "C"

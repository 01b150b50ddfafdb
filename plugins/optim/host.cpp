#include "host.hpp"

#include <atomic>

namespace kiln_optim {
namespace {

// Runtimes may register the plugin from several threads; any of their tables will do.
std::atomic<const kiln_host*> g_host{nullptr};

}  // namespace

const kiln_host& host() { return *g_host.load(std::memory_order_acquire); }

void set_host(const kiln_host* table) { g_host.store(table, std::memory_order_release); }

void fail(kiln_status status, std::string message) { throw Failure{status, std::move(message)}; }

void check(kiln_status status) {
  if (status != KILN_OK) fail(status, host().last_error());
}

}  // namespace kiln_optim

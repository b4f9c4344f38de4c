#include "sim/cli/interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace admit::cli {

namespace {

std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
extern "C" void on_sigint(int) { interrupted.store(true); }

// The flag's handler for `sig`, reset after its first delivery.
void install(int sig) {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(sig, &sa, nullptr);
}

}  // namespace

void catch_sigint() { install(SIGINT); }

bool sigint_seen() noexcept { return interrupted.load(); }

void catch_sigterm() { install(SIGTERM); }

const std::atomic<bool>* interrupt_flag() noexcept { return &interrupted; }

}  // namespace admit::cli

// gate_core: what a FIFO-like gate core must offer to be driven by
// async_fifo_gate (gate/asio/async_fifo_gate.hpp) and judged by the
// simulator (docs/own-gate.md). fifo_gate (fifo_gate.hpp) is one; a team's
// own core is another.
//
// The calls. The driver (the Asio adapter) owns the tickets: it hands out
// 1, 2, 3, ... (never no_ticket, never one twice), one per request, and
// every call carries `now_ns`, virtual or steady nanoseconds that never
// decrease. The core reads no clock and arms no timer.
//   acquire(t, now) -> acquire_result
//       admitted:   t holds a lease from now on;
//       queued:     t waits; `deadline_ns` is when the driver calls expire(t)
//                   if t still waits then (the seeds' gate: now + wait_deadline_ns);
//       queue_full: t is refused (HTTP 429) and forgotten.
//   release(now) -> release_result
//       One lease ends. ok = false when the core counts no lease (nothing
//       changes). `promoted`: the waiter the freed slot went to, now
//       "handed over, unclaimed": it holds the lease, its caller has not
//       resumed yet.
//   claim(t, now) -> bool
//       The promoted t's caller resumed: true exactly when t was handed over
//       and neither claimed nor left since. From then on t's lease ends only
//       through release.
//   expire(t, now), cancel(t, now) -> leave_result
//       t's deadline passed / its caller stopped waiting:
//       removed:           t was waiting and left the queue;
//       handover_released: promotion had won; the core released t's lease
//                          itself, exactly once, and `promoted` names the
//                          next waiter that slot went to, if any;
//       not_waiting:       t was claimed, refused or already gone.
// What the core decides is its own: whom to admit, whom to promote, when a
// waiter's deadline falls. What the simulator checks is what the answers
// imply (docs/own-gate.md, "What is judged").
//
// core_iface and make_core erase the type, so that a program built against
// the installed library can hand its core to the simulator's worlds, which
// are compiled once (sim/world/own_gate.hpp).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "gate/fifo/fifo_gate.hpp"

namespace admit::fifo {

template <class C>
concept gate_core = requires(C& c, ticket_id t, std::int64_t now_ns) {
  { c.acquire(t, now_ns) } -> std::same_as<acquire_result>;
  { c.release(now_ns) } -> std::same_as<release_result>;
  { c.claim(t, now_ns) } -> std::same_as<bool>;
  { c.expire(t, now_ns) } -> std::same_as<leave_result>;
  { c.cancel(t, now_ns) } -> std::same_as<leave_result>;
};

static_assert(gate_core<fifo_gate>, "admitsim's own core is a gate_core");

// Why a core could not go on outside its contract: a core that lives in a
// child process (sim/world/fifo/process_core.hpp) fails when the child
// exits, hangs or answers out of protocol. `kind` names it for the report
// (process_exited, process_hung, process_protocol, process_error); `detail`
// is one sentence with the message and the child's last stderr lines.
struct core_failure {
  std::string kind;
  std::string detail;
};

// A gate core behind virtual calls.
class core_iface {
 public:
  virtual ~core_iface() = default;
  // Set once the core cannot go on; its answers from then on are inert
  // (nobody admitted, nothing promoted) and the run that holds it is
  // inconclusive. An in-process core never fails this way.
  virtual const core_failure* failed() const noexcept { return nullptr; }
  virtual acquire_result acquire(ticket_id t, std::int64_t now_ns) = 0;
  virtual release_result release(std::int64_t now_ns) = 0;
  virtual bool claim(ticket_id t, std::int64_t now_ns) = 0;
  virtual leave_result expire(ticket_id t, std::int64_t now_ns) = 0;
  virtual leave_result cancel(ticket_id t, std::int64_t now_ns) = 0;
};

template <gate_core C>
class core_model final : public core_iface {
 public:
  template <class... A>
  explicit core_model(A&&... a) : core_(std::forward<A>(a)...) {}
  acquire_result acquire(ticket_id t, std::int64_t now_ns) override { return core_.acquire(t, now_ns); }
  release_result release(std::int64_t now_ns) override { return core_.release(now_ns); }
  bool claim(ticket_id t, std::int64_t now_ns) override { return core_.claim(t, now_ns); }
  leave_result expire(ticket_id t, std::int64_t now_ns) override { return core_.expire(t, now_ns); }
  leave_result cancel(ticket_id t, std::int64_t now_ns) override { return core_.cancel(t, now_ns); }
  C& get() noexcept { return core_; }

 private:
  C core_;
};

// Makes one core for one gate of a scenario, from that gate's configuration
// (max_active, max_waiting, wait_deadline_ns; event_log_capacity and the
// mutation are admitsim's own and mean nothing to another core).
using core_factory = std::function<std::unique_ptr<core_iface>(const config&)>;

// The factory of a core type constructible from a config.
template <gate_core C>
  requires std::constructible_from<C, const config&>
core_factory factory_of() {
  return [](const config& cfg) -> std::unique_ptr<core_iface> { return std::make_unique<core_model<C>>(cfg); };
}

}  // namespace admit::fifo

// recorded_core: a team's own gate core (sim/world/own_gate.hpp) as the FIFO
// world runs it: every call goes to the core, and its answer is checked
// against a ledger of what the core's earlier answers imply.
//
// The ledger. Which tickets wait (in the order they queued, with the deadline
// the core gave), which were handed over and not claimed, and how many leases
// the core's answers have granted and not taken back. The events the world's
// monitors judge carry the ledger's counts, so a core whose own counters
// are wrong, or which reports none, is judged by what it did. The events of
// one call come in the order fifo_gate logs them, each with the counts after
// its own step (a release's `released` before the `promoted` it makes), so
// a core that behaves as fifo_gate gets fifo_gate's log, byte for byte.
//
// The contract (gate/fifo/gate_core.hpp). An answer that contradicts the
// ledger is a breach, reported to the breach_sink with what the core answered
// and what the ledger held (the monitors count it against
// lease_released_once). So is a break of the FIFO gate's rules that the
// events alone would not show (counted against fifo_order): a slot freed while
// tickets wait and none promoted, a request queued while a slot is free and
// nobody waits. Where the adapter could not go on with the answer as it is,
// it gets the ledger's instead:
//   * a promotion of a ticket that was not waiting is logged (fifo_order
//     judges it) but not passed on: no waiter of the adapter belongs to it;
//   * claim answers true only for a ticket that was handed over.
// Everything else passes through as the core said it: the run shows what
// the core's own answers lead to.
//
// Cost. O(log n) per call in the number of tickets waiting or handed over:
// a user's core is not on admitsim's own fast path.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"
#include "gate/fifo/gate_core.hpp"

namespace admit::world::fifo_world {

// What a breach breaks: the lease accounting (lease_released_once) or the
// FIFO rules (fifo_order: a freed slot goes to the oldest waiter, and a
// request waits only when no slot is free or others wait).
enum class breach_kind : std::uint8_t { lease, order };

class breach_sink {
 public:
  virtual void on_breach(breach_kind kind, std::string what) = 0;
  // The core failed outside its contract (core_iface::failed): once per core.
  virtual void on_failure(const fifo::core_failure& f) = 0;

 protected:
  ~breach_sink() = default;
};

class recorded_core {
 public:
  recorded_core(std::string name, const fifo::config& cfg, std::unique_ptr<fifo::core_iface> core);

  fifo::acquire_result acquire(fifo::ticket_id t, std::int64_t now_ns);
  fifo::release_result release(std::int64_t now_ns);
  bool claim(fifo::ticket_id t, std::int64_t now_ns);
  fifo::leave_result expire(fifo::ticket_id t, std::int64_t now_ns) { return leave(t, now_ns, fifo::status::wait_timeout); }
  fifo::leave_result cancel(fifo::ticket_id t, std::int64_t now_ns) { return leave(t, now_ns, fifo::status::wait_cancelled); }

  // The ledger's counts.
  std::int64_t active() const noexcept { return active_; }
  std::int64_t waiting() const noexcept { return static_cast<std::int64_t>(waiting_.size()); }
  const fifo::config& cfg() const noexcept { return cfg_; }
  const fifo::counters& totals() const noexcept { return totals_; }
  std::uint64_t last_order() const noexcept { return order_; }
  fifo::snapshot snap() const;
  const std::string& name() const noexcept { return name_; }
  std::uint64_t breaches() const noexcept { return breaches_; }
  // The core's failure (a child process that exited, hung or left the
  // protocol), or null. From then on every call answers inertly (nothing
  // admitted, promoted or released) without the ledger, the log or a breach:
  // the run ends inconclusive and nothing after the failure is judged.
  const fifo::core_failure* failure() const noexcept { return core_->failed(); }

  void set_event_sink(fifo::event_sink* s) noexcept { sink_ = s; }
  void set_breach_sink(breach_sink* s) noexcept { breach_to_ = s; }

 private:
  fifo::leave_result leave(fifo::ticket_id t, std::int64_t now_ns, fifo::status st);
  // A promotion the core answered: logged; passed on only if `p` was waiting.
  std::optional<fifo::ticket_id> promote(std::optional<fifo::ticket_id> p);
  void log(fifo::status st, fifo::ticket_id t);
  void breach(std::string what, breach_kind kind = breach_kind::lease);
  // After a slot was freed (`call`): a waiter must have taken it.
  void check_slot_taken(const std::string& call);
  void advance(std::int64_t now_ns) { now_ns_ = now_ns > now_ns_ ? now_ns : now_ns_; }
  // True once the core failed; tells the breach sink the first time.
  bool gone();
  bool failure_told_ = false;

  std::string name_;
  fifo::config cfg_;
  std::unique_ptr<fifo::core_iface> core_;
  std::int64_t now_ns_ = 0;
  std::int64_t active_ = 0;
  std::map<fifo::ticket_id, std::int64_t> waiting_;  // ticket -> deadline; tickets grow, so oldest first
  std::set<fifo::ticket_id> handed_;
  fifo::counters totals_;
  std::uint64_t order_ = 0;
  fifo::event_ring log_;
  fifo::event_sink* sink_ = nullptr;
  breach_sink* breach_to_ = nullptr;
  std::uint64_t breaches_ = 0;
};

}  // namespace admit::world::fifo_world

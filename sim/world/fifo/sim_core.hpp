// sim_core: the core inside each gate of the FIFO world: admitsim's
// fifo_gate, or a team's own core through recorded_core (sim/world/own_gate.hpp).
//
// One type for both, so that the world, its monitors and its reports are
// compiled once and run either; the branch is on a pointer that stays null
// in every run of admitsim's own core (the fast path keeps fifo_gate's
// inlined calls). The monitors read the counts, the configuration, the
// totals and the log from here, whichever core runs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gate/fifo/fifo_gate.hpp"
#include "gate/fifo/gate_core.hpp"
#include "sim/world/fifo/recorded_core.hpp"
#include "sim/world/own_gate.hpp"

namespace admit::world::fifo_world {

class sim_core {
 public:
  explicit sim_core(const fifo::config& cfg) : own_(cfg) {}
  // A gate running `og`'s core (or admitsim's when `og` is null), whose
  // breaches of its contract go to `breaches`.
  sim_core(const fifo::config& cfg, const own_gate* og, breach_sink* breaches) : own_(cfg) {
    if (og == nullptr) return;
    user_ = std::make_unique<recorded_core>(og->name, cfg, og->make(cfg));
    user_->set_breach_sink(breaches);
  }

  fifo::acquire_result acquire(fifo::ticket_id t, std::int64_t now_ns) {
    if (user_) [[unlikely]]
      return user_->acquire(t, now_ns);
    return own_.acquire(t, now_ns);
  }
  fifo::release_result release(std::int64_t now_ns) {
    if (user_) [[unlikely]]
      return user_->release(now_ns);
    return own_.release(now_ns);
  }
  bool claim(fifo::ticket_id t, std::int64_t now_ns) {
    if (user_) [[unlikely]]
      return user_->claim(t, now_ns);
    return own_.claim(t, now_ns);
  }
  fifo::leave_result expire(fifo::ticket_id t, std::int64_t now_ns) {
    if (user_) [[unlikely]]
      return user_->expire(t, now_ns);
    return own_.expire(t, now_ns);
  }
  fifo::leave_result cancel(fifo::ticket_id t, std::int64_t now_ns) {
    if (user_) [[unlikely]]
      return user_->cancel(t, now_ns);
    return own_.cancel(t, now_ns);
  }

  std::int64_t active() const noexcept { return user_ ? user_->active() : own_.active(); }
  std::int64_t waiting() const noexcept { return user_ ? user_->waiting() : own_.waiting(); }
  const fifo::config& cfg() const noexcept { return user_ ? user_->cfg() : own_.cfg(); }
  const fifo::counters& totals() const noexcept { return user_ ? user_->totals() : own_.totals(); }
  std::uint64_t last_order() const noexcept { return user_ ? user_->last_order() : own_.last_order(); }
  fifo::snapshot snap() const { return user_ ? user_->snap() : own_.snap(); }
  void set_event_sink(fifo::event_sink* s) noexcept {
    if (user_) user_->set_event_sink(s);
    else own_.set_event_sink(s);
  }
  // The team's core, or null when admitsim's runs.
  const recorded_core* user() const noexcept { return user_.get(); }

 private:
  fifo::fifo_gate own_;
  std::unique_ptr<recorded_core> user_;
};

static_assert(fifo::gate_core<sim_core>);

}  // namespace admit::world::fifo_world

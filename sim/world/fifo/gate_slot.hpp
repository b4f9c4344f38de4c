// gate_slot: one FIFO gate of the scenario, with what its monitors keep of it.
//
// The gate is an async_fifo_gate on the process's executor, around a sim_core
// (admitsim's fifo_gate, or a team's own core). Its core reports
// every transition to the slot (fifo::event_sink) and the adapter every call
// into it (fifo_observer); the slot hands both to the FIFO monitors
// (monitors.hpp), which keep per gate: leases granted and released, and the
// tickets still queued, in the order they queued (queue_order.hpp).
//
// gate_set: every gate slot, and the gates of ended process lifetimes that
// work of theirs still refers to.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/fifo/queue_order.hpp"
#include "sim/world/fifo/request.hpp"
#include "sim/world/fifo/process_core.hpp"
#include "sim/world/fifo/sim_core.hpp"
#include "sim/world/own_gate.hpp"

namespace admit::world::fifo_world {

class fifo_monitors;

class gate_slot final : public fifo::event_sink, public gate::core_observer<sim_core>, public breach_sink {
 public:
  // `og`: a team's own core runs in this gate (null: admitsim's).
  // A gate whose spec names a process (docs/process-gate.md) runs that child
  // as its core, opened with the run's `seed`; `og` is then not used.
  gate_slot(fifo_monitors& m, const scenario::gate_spec& spec, process_executor ex, const own_gate* og,
            std::uint64_t seed)
      : name(spec.name), monitors_(m), cfg_(spec.fifo), process_(process_gate(spec, seed)),
        own_(process_ ? &*process_ : og), gate_(make_gate(ex)) {
    attach();
  }
  gate_slot(const gate_slot&) = delete;
  gate_slot& operator=(const gate_slot&) = delete;

  void on_event(const fifo::event& e) override;                // monitors.hpp
  void on_gate_change(const sim_core& core) override;  // monitors.hpp
  void on_breach(breach_kind kind, std::string what) override;  // monitors.hpp
  void on_failure(const fifo::core_failure& f) override;        // monitors.hpp

  sim_gate& gate() noexcept { return *gate_; }
  const sim_gate& gate() const noexcept { return *gate_; }
  // The tickets queued at this gate, in order (queue_order.hpp).
  queue_order& order() noexcept { return order_; }

  // The process crashed: the gate it held is gone. What of it still drains
  // (leases of work still running at the portal, posted claims) reaches a
  // gate nobody monitors; the new lifetime starts with an empty gate and
  // fresh monitor state, so gate invariants apply per process lifetime.
  std::unique_ptr<sim_gate> rebuild(process_executor ex) {
    gate_->set_event_sink(nullptr);
    gate_->set_observer(nullptr);
    std::unique_ptr<sim_gate> dead = std::exchange(gate_, make_gate(ex));
    attach();
    granted = 0;
    released = 0;
    order_.clear();
    return dead;
  }

  const std::string name;
  std::uint64_t granted = 0;
  std::uint64_t released = 0;

 private:
  std::unique_ptr<sim_gate> make_gate(process_executor ex) {
    return std::make_unique<sim_gate>(ex, std::in_place, cfg_, own_, this);
  }
  void attach() {
    gate_->set_event_sink(this);
    gate_->set_observer(this);
  }

  static std::optional<own_gate> process_gate(const scenario::gate_spec& spec, std::uint64_t seed) {
    if (!spec.process) return std::nullopt;
    return own_gate{process_core::name_of(*spec.process),
                    [p = *spec.process, gate = spec.name, seed](const fifo::config& cfg) {
                      return std::unique_ptr<fifo::core_iface>(std::make_unique<process_core>(p, cfg, gate, seed));
                    }};
  }

  fifo_monitors& monitors_;
  fifo::config cfg_;
  std::optional<own_gate> process_;  // a process gate's core factory
  const own_gate* own_;
  std::unique_ptr<sim_gate> gate_;
  queue_order order_;
};

class gate_set {
 public:
  gate_set(fifo_monitors& m, const scenario::scenario& sc, process_executor ex, const own_gate* og,
           std::uint64_t seed) {
    slots_.reserve(sc.gates.size());
    for (const auto& g : sc.gates) slots_.push_back(std::make_unique<gate_slot>(m, g, ex, og, seed));
  }

  std::size_t size() const noexcept { return slots_.size(); }
  gate_slot& operator[](std::size_t i) noexcept { return *slots_[i]; }
  auto begin() const noexcept { return slots_.begin(); }
  auto end() const noexcept { return slots_.end(); }

  // A crash: every gate starts empty; the old ones drain as dead gates.
  void rebuild_all(process_executor ex) {
    for (auto& g : slots_) dead_.push_back(dead_gate{g->rebuild(ex), -1});
  }

  // A run with many crashes must not keep every dead gate (each holds its
  // event log). A dead gate gets no new work: once nothing of it is left (no
  // lease counted, no waiter) it stays so, and only a claim posted at that
  // same instant may still refer to it. So a gate seen idle is freed at a
  // later sweep (a crash or a restart), when that instant's posted work has
  // run. A broken core (a mutation) may have leases it no longer counts:
  // those gates are kept.
  void sweep_dead(vtime_ns now) {
    std::erase_if(dead_, [now](dead_gate& d) {
      const sim_gate& g = *d.gate;
      const bool idle = g.core().cfg().mut == fifo::mutation::none && g.core().active() == 0 &&
                        g.core().waiting() == 0 && g.pending_waiters() == 0;
      if (!idle) return false;
      if (d.idle_since_ns >= 0 && d.idle_since_ns < now) return true;
      if (d.idle_since_ns < 0) d.idle_since_ns = now;
      return false;
    });
  }

 private:
  struct dead_gate {
    std::unique_ptr<sim_gate> gate;
    vtime_ns idle_since_ns;  // when a sweep first saw it idle, or -1
  };
  std::vector<std::unique_ptr<gate_slot>> slots_;
  std::vector<dead_gate> dead_;  // gates of ended process lifetimes still referred to; destroyed first
};

}  // namespace admit::world::fifo_world

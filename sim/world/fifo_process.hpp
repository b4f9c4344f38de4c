// fifo_process: the one server process that holds every FIFO gate of a
// scenario ("worker:0" in fault targets), so that faults can strike it.
//
// Model. A process has lifetimes: a crash ends the current one (its gates,
// leases, waiters and handlers are gone; the world rebuilds the gates empty)
// and a restart begins the next. Everything the process runs is tagged with
// the lifetime it belongs to (`generation()`); `deliver` drops work of an
// ended lifetime, so nothing of a dead process ever runs again.
//
// A stall (an event-loop pause) stops the process without losing anything:
// work that falls due while it lasts is held, in the (time, sequence) order
// in which it fell due, and runs in that order when the stall ends, as
// an event loop that wakes up finds its ready callbacks and overdue timers.
//
// What goes through `deliver`: the gates' wait-deadline timers (process_env's
// timer wraps sim_timer) and the world's own entry points into the process
// (accepting a request, a completion of work at the portal, a client's
// disconnect). Posted work of the gate itself (a claim after a release, an
// immediate outcome) is caused only by delivered work, so it needs no check
// of its own; after a crash it still drains through the dead gate, whose
// monitors are detached and whose completions reach handlers that check
// their request's lifetime and drop themselves.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/sim_executor.hpp"
#include "sim/kernel/sim_timer.hpp"
#include "sim/kernel/unique_task.hpp"
#include "sim/kernel/vtime.hpp"

namespace admit::world {

using sim::vtime_ns;

class fifo_process {
 public:
  explicit fifo_process(sim::scheduler& s) noexcept : sched_(&s) {}
  fifo_process(const fifo_process&) = delete;
  fifo_process& operator=(const fifo_process&) = delete;

  std::uint64_t generation() const noexcept { return generation_; }
  bool alive() const noexcept { return alive_; }
  // From the stall's start until its end task has run: work due at the very
  // instant it ends, scheduled before that task, is still held, so that it
  // runs after the work that fell due earlier.
  bool stalled() const noexcept { return stalled_; }

  // Runs `f` now, holds it until the stall ends, or drops it when its
  // lifetime `gen` has ended (or the process is down).
  template <class F>
  void deliver(std::uint64_t gen, F&& f) {
    if (gen != generation_ || !alive_) return;
    if (stalled()) {
      held_.push_back(sim::unique_task(std::forward<F>(f)));
      return;
    }
    std::forward<F>(f)();
  }

  // A crash: the lifetime ends, held work is dropped, the process is down.
  void crash() {
    ++generation_;
    alive_ = false;
    stalled_ = false;
    stalled_until_ = 0;
    held_.clear();
  }
  void restart() noexcept { alive_ = true; }

  // A stall until `until_ns` (stalls overlap into their union). Schedules
  // its end, which runs the held work inline, in the order it fell due and
  // before anything else due at that instant that was scheduled later; what
  // the held work posts runs after it, as in an event loop's next turn.
  void stall(vtime_ns until_ns) {
    if (!alive_ || (stalled_ && until_ns <= stalled_until_)) return;
    stalled_ = true;
    stalled_until_ = until_ns;
    const std::uint64_t gen = generation_;
    sched_->schedule_at(until_ns, [this, gen, until_ns] {
      if (gen != generation_ || !stalled_ || stalled_until_ != until_ns) return;  // crashed, or a longer stall
      stalled_ = false;
      std::vector<sim::unique_task> due = std::move(held_);
      held_.clear();
      for (auto& t : due) t();
    });
  }
  vtime_ns stalled_until() const noexcept { return stalled_until_; }

  // Teardown: destroys the work a stall still holds, unrun.
  void drop_held() noexcept {
    std::vector<sim::unique_task> gone = std::move(held_);
    held_.clear();
  }

 private:
  sim::scheduler* sched_;
  std::uint64_t generation_ = 0;
  bool alive_ = true;
  bool stalled_ = false;
  vtime_ns stalled_until_ = 0;
  std::vector<sim::unique_task> held_;
};

// The process's executor: the simulator's, plus the process its timers
// belong to.
class process_executor : public sim::sim_executor {
 public:
  process_executor(const sim::sim_executor& ex, fifo_process& p) noexcept : sim::sim_executor(ex), proc_(&p) {}
  fifo_process& process() const noexcept { return *proc_; }

 private:
  fifo_process* proc_;
};

// A sim_timer whose completions go through the process: held during a stall,
// dropped once the lifetime that armed it has ended.
class process_timer {
 public:
  using executor_type = sim::sim_executor;
  explicit process_timer(const process_executor& ex) noexcept : inner_(ex), proc_(&ex.process()) {}
  process_timer(const process_timer&) = delete;
  process_timer& operator=(const process_timer&) = delete;

  executor_type get_executor() const noexcept { return inner_.get_executor(); }
  void expires_at(vtime_ns t_ns) { inner_.expires_at(t_ns); }

  template <class Handler>
  void async_wait(Handler&& h) {
    inner_.async_wait([p = proc_, gen = proc_->generation(), h = std::forward<Handler>(h)](
                          boost::system::error_code ec) mutable {
      // A cancelled wait completes at once (the gate ignores it): only an
      // expiry is process work.
      if (ec) {
        std::move(h)(ec);
        return;
      }
      p->deliver(gen, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
    });
  }

 private:
  sim::sim_timer inner_;
  fifo_process* proc_;
};

// The environment the world's async_fifo_gate runs in (see async_fifo_gate.hpp, "Environment").
struct process_env {
  using executor_type = process_executor;
  using timer_type = process_timer;
  static std::int64_t now_ns(const executor_type& ex) noexcept { return ex.sched().now_ns(); }
  static void expires_at(timer_type& t, std::int64_t deadline_ns) { t.expires_at(deadline_ns); }
};

}  // namespace admit::world

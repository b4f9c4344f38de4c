// scheduler: the single-threaded, virtual-time event loop of one simulation run.
//
// Model. The scheduler owns a virtual clock (`now_ns`, int64 nanoseconds) and
// two queues: a ready queue of work posted "for now", and a timer heap of work
// due at a later instant. Every entry receives a sequence number from one
// counter when it is scheduled, and entries run in strict (time, sequence)
// order: at one instant, whatever was scheduled first runs first, whether it
// was posted or a timer (the tie rule, pinned by tests/kernel/scheduler_test).
// Time jumps straight to the next due timer; nothing sleeps and nothing reads
// a real clock, so a run's outcome depends only on its inputs and seed.
//
// Limits. A run stops, with a typed status, at an event budget or a time
// horizon; it never hangs. One scheduler belongs to one thread: parallelism in
// admitsim is across runs, never inside one.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/kernel/unique_task.hpp"
#include "sim/kernel/vtime.hpp"

namespace admit::sim {

class sim_executor;

// Identifies one scheduled timer entry so that it can be cancelled. A handle
// whose entry already ran or was cancelled is inert.
struct timer_handle {
  std::uint32_t slot = UINT32_MAX;
  std::uint32_t generation = 0;
};

enum class run_status : std::uint8_t {
  idle,         // nothing left to run
  stopped,      // stop() was called
  event_limit,  // the event budget was used up
  time_limit,   // the next event lies beyond the horizon
};

const char* to_string(run_status);

struct run_limits {
  std::uint64_t max_events = UINT64_MAX;
  vtime_ns horizon_ns = vtime_max;  // events due after this instant are not run
};

class scheduler {
 public:
  scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  ~scheduler();

  vtime_ns now_ns() const noexcept { return now_; }
  std::uint64_t events_run() const noexcept { return events_run_; }
  std::uint64_t next_sequence() const noexcept { return seq_; }
  std::size_t pending() const noexcept { return ready_.size() + live_timers_; }
  bool running() const noexcept { return running_; }

  sim_executor get_executor() noexcept;

  // Queues `t` to run at the current instant, after everything already queued.
  void post(unique_task t) {
    ready_.push_back(ready_entry{seq_++, std::move(t)});
  }

  // Queues `t` to run at `when_ns` (an instant in the past means now).
  timer_handle schedule_at(vtime_ns when_ns, unique_task t);
  timer_handle schedule_after(vtime_ns delay_ns, unique_task t) {
    ADMIT_ASSERT(delay_ns >= 0, "a delay cannot be negative");
    return schedule_at(delay_ns > vtime_max - now_ ? vtime_max : now_ + delay_ns, std::move(t));
  }

  // Drops a scheduled timer entry without running it. Returns false when the
  // entry already ran or was cancelled.
  bool cancel(timer_handle h) noexcept;

  // Removes a scheduled timer entry and returns its task unrun (empty when the
  // entry already ran or was cancelled). Used to complete a wait early.
  unique_task take(timer_handle h) noexcept;

  // Runs events in (time, sequence) order until a limit or until idle.
  run_status run(run_limits limits = {});
  // Runs every event due at or before `t_ns`, then sets the clock to `t_ns`
  // (status time_limit: later events remain; idle: none remain).
  run_status run_until(vtime_ns t_ns, std::uint64_t max_events = UINT64_MAX);
  // Runs exactly one event if there is one; returns whether it did.
  bool run_one();
  // Destroys every pending entry without running it (suspended coroutines
  // are destroyed, which may queue and drop further work), until none is
  // left. A driver calls this before destroying objects that pending work
  // refers to; the destructor calls it too.
  void shutdown() noexcept;
  // Makes the current run() return `stopped` after the running event.
  void stop() noexcept { stop_requested_ = true; }

 private:
  struct ready_entry {
    std::uint64_t seq;
    unique_task fn;
  };
  struct heap_entry {
    vtime_ns when;
    std::uint64_t seq;
    std::uint32_t slot;
    std::uint32_t generation;
  };
  struct slot_entry {
    unique_task fn;
    std::uint32_t generation = 0;
    bool live = false;
  };
  // Min-heap on (when, seq) stored in a vector; std::*_heap is a max-heap, so
  // the comparison is reversed.
  static bool later(const heap_entry& a, const heap_entry& b) noexcept {
    return a.when != b.when ? a.when > b.when : a.seq > b.seq;
  }

  enum class next_kind { none, ready, timer };
  next_kind peek_next(vtime_ns horizon_ns);
  void run_ready();
  void run_timer();

  vtime_ns now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::size_t live_timers_ = 0;
  bool running_ = false;
  bool stop_requested_ = false;
  bool tearing_down_ = false;
  std::deque<ready_entry> ready_;
  std::vector<heap_entry> heap_;
  std::vector<slot_entry> slots_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace admit::sim

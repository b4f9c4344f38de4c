#include "sim/kernel/scheduler.hpp"

#include <algorithm>

#include "sim/kernel/sim_executor.hpp"

namespace admit::sim {

const char* to_string(run_status s) {
  switch (s) {
    case run_status::idle: return "idle";
    case run_status::stopped: return "stopped";
    case run_status::event_limit: return "event_limit";
    case run_status::time_limit: return "time_limit";
  }
  return "unknown";
}

scheduler::scheduler() = default;

scheduler::~scheduler() { shutdown(); }

void scheduler::shutdown() noexcept {
  // Destroying pending work destroys suspended coroutine frames, whose
  // destructors may cancel timers or post work to this scheduler. Keep
  // draining (without running anything) until both queues are empty.
  ADMIT_ASSERT(!running_, "shutdown from inside run()");
  tearing_down_ = true;
  running_ = false;  // executors queue instead of running inline
  for (;;) {
    bool any = false;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].live) {
        any = true;
        slots_[i].live = false;
        ++slots_[i].generation;
        unique_task dropped = std::move(slots_[i].fn);
      }
    }
    while (!ready_.empty()) {
      any = true;
      std::deque<ready_entry> batch;
      batch.swap(ready_);
      batch.clear();
    }
    if (!any) break;
  }
  heap_.clear();
  live_timers_ = 0;
  free_slots_.clear();
  for (std::size_t i = slots_.size(); i > 0; --i) free_slots_.push_back(static_cast<std::uint32_t>(i - 1));
  tearing_down_ = false;
}

sim_executor scheduler::get_executor() noexcept { return sim_executor(*this); }

timer_handle scheduler::schedule_at(vtime_ns when_ns, unique_task t) {
  ADMIT_ASSERT(static_cast<bool>(t), "a scheduled task must hold a callable");
  if (tearing_down_) {
    post(std::move(t));  // dropped unrun by the destructor's drain loop
    return timer_handle{};
  }
  if (when_ns < now_) when_ns = now_;
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    ADMIT_ASSERT(slots_.size() < UINT32_MAX, "timer slot table exhausted");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slot_entry& s = slots_[slot];
  s.fn = std::move(t);
  s.live = true;
  ++live_timers_;
  heap_.push_back(heap_entry{when_ns, seq_++, slot, s.generation});
  std::push_heap(heap_.begin(), heap_.end(), later);
  return timer_handle{slot, s.generation};
}

bool scheduler::cancel(timer_handle h) noexcept {
  if (h.slot >= slots_.size()) return false;
  slot_entry& s = slots_[h.slot];
  if (!s.live || s.generation != h.generation) return false;
  s.live = false;
  ++s.generation;  // the heap entry is now stale and will be skipped
  --live_timers_;
  free_slots_.push_back(h.slot);
  unique_task dropped = std::move(s.fn);  // destroyed after the slot is consistent
  return true;
}

unique_task scheduler::take(timer_handle h) noexcept {
  if (h.slot >= slots_.size()) return {};
  slot_entry& s = slots_[h.slot];
  if (!s.live || s.generation != h.generation) return {};
  s.live = false;
  ++s.generation;
  --live_timers_;
  free_slots_.push_back(h.slot);
  return std::move(s.fn);
}

scheduler::next_kind scheduler::peek_next(vtime_ns horizon_ns) {
  // Discard stale (cancelled) entries at the top of the heap.
  while (!heap_.empty()) {
    const heap_entry& top = heap_.front();
    const slot_entry& s = slots_[top.slot];
    if (s.live && s.generation == top.generation) break;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  if (!ready_.empty()) {
    // A timer due now that was scheduled before the oldest ready entry wins.
    if (!heap_.empty() && heap_.front().when <= now_ && heap_.front().seq < ready_.front().seq)
      return next_kind::timer;
    return next_kind::ready;
  }
  if (heap_.empty()) return next_kind::none;
  if (heap_.front().when > horizon_ns) return next_kind::none;
  return next_kind::timer;
}

void scheduler::run_ready() {
  unique_task fn = std::move(ready_.front().fn);
  ready_.pop_front();
  ++events_run_;
  fn();
}

void scheduler::run_timer() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  heap_entry e = heap_.back();
  heap_.pop_back();
  slot_entry& s = slots_[e.slot];
  ADMIT_ASSERT(e.when >= now_, "virtual time must never move backwards");
  now_ = e.when;
  unique_task fn = std::move(s.fn);
  s.live = false;
  ++s.generation;
  --live_timers_;
  free_slots_.push_back(e.slot);
  ++events_run_;
  fn();
}

run_status scheduler::run(run_limits limits) {
  ADMIT_ASSERT(!running_, "scheduler::run is not reentrant");
  running_ = true;
  stop_requested_ = false;
  struct reset_running {
    bool& flag;
    ~reset_running() { flag = false; }
  } guard{running_};
  std::uint64_t budget = limits.max_events;
  for (;;) {
    if (stop_requested_) return run_status::stopped;
    next_kind k = peek_next(limits.horizon_ns);
    if (k == next_kind::none) {
      if (!heap_.empty()) return run_status::time_limit;
      return run_status::idle;
    }
    if (budget == 0) return run_status::event_limit;
    --budget;
    if (k == next_kind::ready)
      run_ready();
    else
      run_timer();
  }
}

run_status scheduler::run_until(vtime_ns t_ns, std::uint64_t max_events) {
  ADMIT_ASSERT(t_ns >= now_, "run_until cannot go back in time");
  run_status st = run(run_limits{max_events, t_ns});
  if (st == run_status::idle || st == run_status::time_limit) now_ = t_ns;
  return st;
}

bool scheduler::run_one() {
  std::uint64_t before = events_run_;
  run(run_limits{1, vtime_max});
  return events_run_ != before;
}

}  // namespace admit::sim

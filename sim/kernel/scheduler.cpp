#include "sim/kernel/scheduler.hpp"

#include <algorithm>
#include <boost/asio/detail/call_stack.hpp>
#include <boost/asio/detail/thread_context.hpp>
#include <boost/asio/detail/thread_info_base.hpp>

#include "sim/kernel/prng.hpp"
#include "sim/kernel/sim_executor.hpp"

namespace admit::sim {

namespace {

// Asio's recycling allocator. Asio allocates every awaitable frame (one per
// coroutine call, and one per `co_await op(use_awaitable)`), cancellation
// slot handlers, and operations through recycling_allocator<> (sim_timer's
// waits, see sim_timer.hpp) from a small per-thread cache: the
// thread_info_base at the top of its thread call stack. Asio's io_context
// pushes one while it runs handlers; without one the cache is off and each of
// those is a malloc and a free. run() pushes this scheduler's own, so a
// simulation gets the same recycling a real io_context thread gets.
//
// Why it is safe (Boost 1.81, detail/thread_info_base.hpp, impl/awaitable.hpp,
// detail/thread_context.hpp). A block carries its own size class (a byte
// past the requested size), so a block may be allocated inside run() and
// freed outside it (or the reverse) or under an io_context's thread info:
// with no cache on top, deallocate simply frees. The cache is a few pointers;
// blocks still cached when run() returns are freed by thread_info_base's
// destructor. Asio consults the top of the stack only for memory; the
// exception capture of io_context looks its own key up by address
// (call_stack::contains), never this one. And addresses never influence
// what the simulation does: the order of events is (time, sequence) alone.
using asio_thread_call_stack =
    boost::asio::detail::call_stack<boost::asio::detail::thread_context, boost::asio::detail::thread_info_base>;

// The key under which run() pushes its thread info; only its address matters.
boost::asio::detail::thread_context recycling_key;

// The innermost tie_perturbation and tie_chooser of this thread (explore runs one world per thread).
thread_local tie_perturbation* current_perturbation = nullptr;
thread_local tie_chooser* current_chooser = nullptr;

// splitmix64_mix undone: the fingerprint is a hash of sequence numbers, whatever the salt.
constexpr std::uint64_t inverse_odd(std::uint64_t a) noexcept {
  std::uint64_t x = a;  // correct to 3 bits for odd a; each Newton step doubles that
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}
constexpr std::uint64_t unxorshift(std::uint64_t y, int k) noexcept {
  std::uint64_t x = y;
  for (int i = 0; i < 64 / k; ++i) x = y ^ (x >> k);
  return x;
}
constexpr std::uint64_t splitmix64_unmix(std::uint64_t z) noexcept {
  z = unxorshift(z, 31) * inverse_odd(0x94D049BB133111EB);
  z = unxorshift(z, 27) * inverse_odd(0xBF58476D1CE4E5B9);
  return unxorshift(z, 30);
}
static_assert(splitmix64_unmix(splitmix64_mix(0)) == 0);
static_assert(splitmix64_unmix(splitmix64_mix(12345)) == 12345);
static_assert(splitmix64_unmix(splitmix64_mix(~0ULL)) == ~0ULL);

}  // namespace

tie_perturbation::tie_perturbation(std::uint64_t seed) noexcept : seed_(seed), outer_(current_perturbation) {
  current_perturbation = this;
}

tie_perturbation::~tie_perturbation() { current_perturbation = outer_; }

tie_choice_scope::tie_choice_scope(tie_chooser& chooser) noexcept : outer_(current_chooser) {
  current_chooser = &chooser;
}

tie_choice_scope::~tie_choice_scope() { current_chooser = outer_; }

std::uint64_t scheduler::scramble(std::uint64_t seq) const noexcept { return splitmix64_mix(seq ^ tie_salt_); }

void scheduler::note_order(std::uint64_t key) noexcept {
  const std::uint64_t seq = tie_salt_ == 0 ? key : splitmix64_unmix(key) ^ tie_salt_;
  order_hash_ = splitmix64_mix(order_hash_ + splitmix64_gamma + seq);
}

const char* to_string(run_status s) {
  switch (s) {
    case run_status::idle: return "idle";
    case run_status::stopped: return "stopped";
    case run_status::event_limit: return "event_limit";
    case run_status::time_limit: return "time_limit";
  }
  return "unknown";
}

scheduler::scheduler() {
  if (tie_chooser* c = current_chooser) [[unlikely]] {
    chooser_ = c;  // keys stay sequence numbers: the chooser decides every tie
    track_order_ = true;
  } else if (tie_perturbation* p = current_perturbation) [[unlikely]] {
    track_order_ = true;
    perturbation_ = p;
    std::uint64_t state = p->seed_ + p->schedulers_++ * splitmix64_gamma;
    tie_salt_ = splitmix64_next(state) | 1;  // never 0: 0 means "not perturbed"
  }
}

scheduler::~scheduler() {
  shutdown();
  if (perturbation_ != nullptr) perturbation_->fingerprints_.push_back(order_hash_);
  if (chooser_ != nullptr) chooser_->finished(order_hash_);
}

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
    while (ready_size_ != 0) {
      any = true;
      unique_task dropped = ready_pop_front();  // its destructor may post more
    }
    if (!any) break;
  }
  queue_.clear();
  live_timers_ = 0;
  free_slots_.clear();
  for (std::size_t i = slots_.size(); i > 0; --i) free_slots_.push_back(static_cast<std::uint32_t>(i - 1));
  tearing_down_ = false;
}

sim_executor scheduler::get_executor() noexcept { return sim_executor(*this); }

void scheduler::grow_ready() {
  const std::size_t capacity = ready_.empty() ? 64 : ready_.size() * 2;
  std::vector<ready_entry> bigger(capacity);
  for (std::size_t i = 0; i < ready_size_; ++i) {
    ready_entry& e = ready_[(ready_head_ + i) & (ready_.size() - 1)];
    bigger[i].seq = e.seq;
    bigger[i].fn = std::move(e.fn);
  }
  ready_.swap(bigger);
  ready_head_ = 0;
}

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
    // Room for every slot in the free list first, so release_slot never
    // allocates (it runs in cancel paths that must not throw).
    if (free_slots_.capacity() <= slots_.size()) free_slots_.reserve(std::max<std::size_t>(64, 2 * slots_.size()));
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slot_entry& s = slots_[slot];
  s.fn = std::move(t);
  s.seq = next_key();
  s.live = true;
  ++live_timers_;
  queue_.push(timer_entry{when_ns, s.seq, slot, s.generation});
  return timer_handle{slot, s.generation};
}

// A cancelled or taken entry frees its slot at once; its queue entry is dropped later, dead.
bool scheduler::cancel(timer_handle h) noexcept {
  unique_task dropped = take(h);  // destroyed after the slot is consistent
  return static_cast<bool>(dropped);
}

unique_task scheduler::take(timer_handle h) noexcept {
  if (h.slot >= slots_.size()) return {};
  slot_entry& s = slots_[h.slot];
  if (!s.live || s.generation != h.generation) return {};
  s.live = false;
  ++s.generation;
  --live_timers_;
  unique_task fn = std::move(s.fn);
  queue_.note_dead();  // its entry stays in the queue, dead, until it reaches the front; the slot is free at once
  release_slot(h.slot);
  return fn;
}

scheduler::next_kind scheduler::peek_next(vtime_ns horizon_ns) {
  if (ready_size_ != 0) {
    // A timer due now that was scheduled before the oldest ready entry wins.
    if (live_timers_ != 0 && settle_timers() && queue_.front().when <= now_ &&
        queue_.front().key < ready_[ready_head_].seq)
      return next_kind::timer;
    return next_kind::ready;
  }
  if (!settle_timers()) {
    ADMIT_ASSERT(live_timers_ == 0, "every live timer is in the queue");
    return next_kind::none;
  }
  if (queue_.front().when > horizon_ns) return next_kind::none;
  return next_kind::timer;
}

// The ready entry is invoked where it lies instead of being moved out first:
// it is taken off the ring before the call, and unique_task moves the
// callable to the stack before running it, so whatever it posts (even
// growing the ring) cannot disturb it.
void scheduler::run_ready() {
  ready_entry& e = ready_[ready_head_];
  ready_head_ = (ready_head_ + 1) & (ready_.size() - 1);
  --ready_size_;
  ++events_run_;
  if (track_order_) [[unlikely]]
    note_order(e.seq);
  e.fn();
}

// A timer's task is moved out and its slot released before the call, so the
// next wait the task arms (a timer re-arming itself is the common case)
// reuses the slot that is hot in cache. Called after settle_timers() found
// the front live.
void scheduler::run_timer() {
  const timer_entry e = queue_.front();
  queue_.pop_front();
  if (const timer_entry* next = queue_.next_hint()) __builtin_prefetch(&slots_[next->slot]);  // the next event's task
  slot_entry& s = slots_[e.slot];
  ADMIT_ASSERT(s.live, "the front of the timer queue is live");
  ADMIT_ASSERT(e.when >= now_, "virtual time must never move backwards");
  now_ = e.when;
  unique_task fn = std::move(s.fn);
  s.live = false;
  ++s.generation;
  --live_timers_;
  release_slot(e.slot);
  ++events_run_;
  if (track_order_) [[unlikely]]
    note_order(s.seq);
  fn();
}

// The candidates: the oldest posted entry, and every live timer due at the
// instant of the next event: once settle_timers() has run (peek_next ran it
// whenever a timer is live), the queue's front is the earliest live timer,
// and every timer due at that instant is in bucket 0 or the heap beside it. A chosen timer that is not at the front is run and left in the
// queue dead, as a cancelled one is.
void scheduler::run_chosen(next_kind k) {
  const vtime_ns t = k == next_kind::ready ? now_ : queue_.front().when;
  candidates_.clear();
  if (ready_size_ != 0) candidates_.push_back(candidate{ready_[ready_head_].seq, no_slot});
  if (live_timers_ != 0) {
    queue_.for_each_due(t, [&](const timer_entry& e) {
      if (entry_live(e)) candidates_.push_back(candidate{e.key, e.slot});
    });
  }
  if (candidates_.size() < 2) {
    if (k == next_kind::ready) run_ready();
    else run_timer();
    return;
  }
  std::sort(candidates_.begin(), candidates_.end(),
            [](const candidate& a, const candidate& b) { return a.key < b.key; });
  const std::size_t pick = chooser_->choose(candidates_.size());
  ADMIT_ASSERT(pick < candidates_.size(), "a tie_chooser must choose one of the candidates");
  const candidate c = candidates_[pick];
  if (c.slot == no_slot) {
    run_ready();
    return;
  }
  if (c.slot == queue_.front().slot) {
    run_timer();
    return;
  }
  slot_entry& s = slots_[c.slot];
  ADMIT_ASSERT(s.live, "a candidate timer is live");
  ADMIT_ASSERT(t >= now_, "virtual time must never move backwards");
  now_ = t;
  unique_task fn = std::move(s.fn);
  s.live = false;
  ++s.generation;
  --live_timers_;
  ++events_run_;
  note_order(s.seq);
  queue_.note_dead();
  release_slot(c.slot);
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
  boost::asio::detail::thread_info_base recycling_cache;
  asio_thread_call_stack::context recycling_context(&recycling_key, recycling_cache);
  std::uint64_t budget = limits.max_events;
  for (;;) {
    if (stop_requested_) return run_status::stopped;
    next_kind k = peek_next(limits.horizon_ns);
    if (k == next_kind::none) {
      if (live_timers_ != 0) return run_status::time_limit;
      return run_status::idle;
    }
    if (budget == 0) return run_status::event_limit;
    --budget;
    if (chooser_ != nullptr) [[unlikely]]
      run_chosen(k);
    else if (k == next_kind::ready)
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

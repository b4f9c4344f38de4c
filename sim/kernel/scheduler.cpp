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

scheduler::scheduler() : heap_(heap_pad) {
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
  heap_.resize(heap_pad);
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

// Sift up from the new last position, moving parents down into the hole.
// Indices are logical (the root is 0); h points at the root.
void scheduler::heap_push(const heap_entry& e) {
  heap_.push_back(e);
  heap_entry* const h = heap_.data() + heap_pad;
  std::size_t i = heap_size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / heap_arity;
    if (!heap_less(e, h[parent])) break;
    heap_place(h, i, h[parent]);
    i = parent;
  }
  heap_place(h, i, e);
}

// The smallest of a node's four children c[0..3] (a full group): the earliest
// time, found with flags rather than branches because the times are random.
// Equal earliest times need the sequence numbers; then `tie` is set and the
// caller decides with heap_less.
std::size_t scheduler::earliest_of_four(const heap_entry* c, bool& tie) noexcept {
  const vtime_ns w0 = c[0].when, w1 = c[1].when, w2 = c[2].when, w3 = c[3].when;
  const std::size_t a = w1 < w0 ? 1 : 0;
  const vtime_ns wa = w1 < w0 ? w1 : w0;
  const std::size_t b = w3 < w2 ? 3 : 2;
  const vtime_ns wb = w3 < w2 ? w3 : w2;
  const vtime_ns m = wb < wa ? wb : wa;
  const int at_min = static_cast<int>(w0 == m) + static_cast<int>(w1 == m) + static_cast<int>(w2 == m) +
                     static_cast<int>(w3 == m);
  tie = at_min > 1;
  return wb < wa ? b : a;
}

// Removes the top (Floyd's bottom-up deletion, as libstdc++'s pop_heap does):
// the hole at the root sinks to a leaf along the smallest children, without
// comparing against the entry that will fill it; then the last entry fills
// the hole and sifts up, usually not at all, since it came from the bottom.
// Each level reads one cache line (the four children).
void scheduler::heap_pop_top() noexcept {
  const heap_entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_size();
  if (n == 0) return;
  heap_entry* const h = heap_.data() + heap_pad;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = heap_arity * i + 1;
    if (first >= n) break;
    std::size_t best;
    if (first + heap_arity <= n) {
      bool tie = false;
      best = first + earliest_of_four(h + first, tie);
      if (tie) [[unlikely]] {
        best = first;
        for (std::size_t c = first + 1; c < first + heap_arity; ++c)
          if (heap_less(h[c], h[best])) best = c;
      }
    } else {
      best = first;
      for (std::size_t c = first + 1; c < n; ++c)
        if (heap_less(h[c], h[best])) best = c;
    }
    heap_place(h, i, h[best]);
    i = best;
  }
  while (i > 0) {
    const std::size_t parent = (i - 1) / heap_arity;
    if (!heap_less(last, h[parent])) break;
    heap_place(h, i, h[parent]);
    i = parent;
  }
  heap_place(h, i, last);
}

// The last entry fills the hole and moves up or down to where it belongs.
void scheduler::heap_remove_at(std::size_t i) noexcept {
  const heap_entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_size();
  if (i == n) return;
  heap_entry* const h = heap_.data() + heap_pad;
  if (i > 0 && heap_less(last, h[(i - 1) / heap_arity])) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / heap_arity;
      if (!heap_less(last, h[parent])) break;
      heap_place(h, i, h[parent]);
      i = parent;
    }
  } else {
    for (;;) {
      const std::size_t first = heap_arity * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      for (std::size_t c = first + 1; c < first + heap_arity && c < n; ++c)
        if (heap_less(h[c], h[best])) best = c;
      if (!heap_less(h[best], last)) break;
      heap_place(h, i, h[best]);
      i = best;
    }
  }
  heap_place(h, i, last);
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
    heap_pos_.push_back(0);
  }
  slot_entry& s = slots_[slot];
  s.fn = std::move(t);
  s.seq = next_key();
  s.live = true;
  ++live_timers_;
  heap_push(heap_entry{when_ns, slot});
  return timer_handle{slot, s.generation};
}

// A cancelled or taken entry leaves the heap at once and frees its slot.
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
  heap_remove_at(heap_pos_[h.slot]);  // out of the heap now: its slot is free at once
  release_slot(h.slot);
  return fn;
}

scheduler::next_kind scheduler::peek_next(vtime_ns horizon_ns) {
  // Every entry in the heap is live: cancelling removes an entry at once.
  if (ready_size_ != 0) {
    // A timer due now that was scheduled before the oldest ready entry wins.
    if (heap_size() != 0 && heap_top().when <= now_ && slots_[heap_top().slot].seq < ready_[ready_head_].seq)
      return next_kind::timer;
    return next_kind::ready;
  }
  if (heap_size() == 0) return next_kind::none;
  if (heap_top().when > horizon_ns) return next_kind::none;
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
// reuses the slot that is hot in cache.
void scheduler::run_timer() {
  const heap_entry e = heap_top();
  heap_pop_top();
  if (heap_size() != 0) __builtin_prefetch(&slots_[heap_top().slot]);  // the next event's task
  slot_entry& s = slots_[e.slot];
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
// instant of the next event. Entries due at one instant t form a subtree at
// the top of the heap (a parent is never later than its children), so the
// walk visits only them and their children. A chosen timer that is not at the
// top leaves the heap as a cancelled one does.
void scheduler::run_chosen(next_kind k) {
  const vtime_ns t = k == next_kind::ready ? now_ : heap_top().when;
  candidates_.clear();
  if (ready_size_ != 0) candidates_.push_back(candidate{ready_[ready_head_].seq, no_slot});
  const heap_entry* const h = heap_.data() + heap_pad;
  const std::size_t n = heap_size();
  due_walk_.clear();
  if (n != 0) due_walk_.push_back(0);
  while (!due_walk_.empty()) {
    const std::size_t i = due_walk_.back();
    due_walk_.pop_back();
    if (h[i].when != t) continue;
    candidates_.push_back(candidate{slots_[h[i].slot].seq, h[i].slot});
    for (std::size_t c = heap_arity * i + 1; c <= heap_arity * i + heap_arity && c < n; ++c) due_walk_.push_back(c);
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
  if (c.slot == heap_top().slot) {
    run_timer();
    return;
  }
  slot_entry& s = slots_[c.slot];
  ADMIT_ASSERT(t >= now_, "virtual time must never move backwards");
  now_ = t;
  unique_task fn = std::move(s.fn);
  s.live = false;
  ++s.generation;
  --live_timers_;
  ++events_run_;
  note_order(s.seq);
  heap_remove_at(heap_pos_[c.slot]);
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
      if (heap_size() != 0) return run_status::time_limit;
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

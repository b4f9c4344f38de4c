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
//
// Same-instant order (opt-in). While a tie_perturbation is alive on a thread,
// every scheduler constructed on that thread orders entries due at one
// instant by a key drawn from the perturbation's seed instead of by their
// sequence number: timers at one instant, and a due timer against posted
// work, run in a seeded order; posted work keeps its FIFO order among itself
// (as an io_context's queue does). Each such scheduler leaves a fingerprint of
// the order it ran in, so a search can count the distinct orders it saw
// (admitsim explore --perturb-ties, docs/explore.md). Without one, the key is
// the sequence number and nothing changes. While a tie_choice_scope is alive
// instead, a tie_chooser decides each such choice: a search that replays and
// varies the choices enumerates the orders (admitsim explore --exhaustive).
//
// Cost (see docs/performance.md). The ready queue is a ring buffer that only
// grows; the timer heap is a 4-ary min-heap of 16-byte (time, slot) entries
// whose tasks and sequence numbers live in a slot table, so sifting moves
// small entries, never a task, and a node's children share one cache line. A
// compact table remembers where each slot's entry is in the heap, so a
// cancelled timer leaves the heap at once (the last entry takes its place)
// instead of staying there dead until its time: a run that cancels most of
// its timeouts keeps a heap the size of its live timers. Once the queues have grown to a run's peak,
// scheduling allocates nothing. While run() is active it also gives Asio's
// per-thread recycling allocator a home (see scheduler.cpp), so coroutine
// frames and timer operations reuse memory instead of calling malloc for
// every wait. None of this depends on an address: the order of events is
// (time, sequence) alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/kernel/unique_task.hpp"
#include "sim/kernel/vtime.hpp"

namespace admit::sim {

class sim_executor;

namespace detail {

// Allocates on 64-byte boundaries (the scheduler's timer heap).
template <class T>
struct cache_line_allocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};
  cache_line_allocator() noexcept = default;
  template <class U>
  cache_line_allocator(const cache_line_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }
  friend bool operator==(const cache_line_allocator&, const cache_line_allocator&) noexcept { return true; }
};

}  // namespace detail

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

class scheduler;

// Decides, in a scheduler constructed while a tie_choice_scope is alive on its
// thread, which entry runs next whenever more than one could: the entry the
// default order would run next, every timer due at the same instant, and the
// oldest posted entry (posted work keeps its FIFO order among itself, as under
// a tie_perturbation). The candidates are numbered 0 .. n-1 in the default
// (time, sequence) order, so always choosing 0 runs the default order. A
// search that replays a prefix of choices and varies the rest enumerates the
// orders (admitsim explore --exhaustive, sim/explore/exhaustive.hpp).
class tie_chooser {
 public:
  virtual ~tie_chooser() = default;
  // `n` >= 2 entries could run next; returns the one to run, below n.
  virtual std::size_t choose(std::size_t n) = 0;
  // When the scheduler is destroyed: the fingerprint of the order it ran in
  // (the same hash as tie_perturbation::fingerprints()).
  virtual void finished(std::uint64_t fingerprint) { (void)fingerprint; }
};

// Makes the schedulers constructed on this thread, while it lives, ask
// `chooser` at every choice point. Scopes nest; the innermost wins. A
// tie_perturbation and a tie_choice_scope do not combine: the chooser decides.
class tie_choice_scope {
 public:
  explicit tie_choice_scope(tie_chooser& chooser) noexcept;
  ~tie_choice_scope();
  tie_choice_scope(const tie_choice_scope&) = delete;
  tie_choice_scope& operator=(const tie_choice_scope&) = delete;

 private:
  tie_chooser* outer_;
};

// Makes the schedulers constructed on this thread, while it lives, run
// same-instant entries in an order drawn from `seed` (the n-th scheduler from
// a sub-seed of `seed` and n). Scopes nest; the innermost wins.
class tie_perturbation {
 public:
  explicit tie_perturbation(std::uint64_t seed) noexcept;
  ~tie_perturbation();
  tie_perturbation(const tie_perturbation&) = delete;
  tie_perturbation& operator=(const tie_perturbation&) = delete;

  // One per scheduler destroyed under it, in order: equal fingerprints, the
  // same order of events (a hash of the sequence numbers in the order run).
  const std::vector<std::uint64_t>& fingerprints() const noexcept { return fingerprints_; }

 private:
  friend class scheduler;
  std::uint64_t seed_;
  std::uint64_t schedulers_ = 0;
  std::vector<std::uint64_t> fingerprints_;
  tie_perturbation* outer_;
};

class scheduler {
 public:
  scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  ~scheduler();

  vtime_ns now_ns() const noexcept { return now_; }
  std::uint64_t events_run() const noexcept { return events_run_; }
  // Sequence numbers start at 0, so this is also how many the scheduler has drawn.
  std::uint64_t next_sequence() const noexcept { return seq_; }
  std::size_t pending() const noexcept { return ready_size_ + live_timers_; }
  bool running() const noexcept { return running_; }

  sim_executor get_executor() noexcept;

  // Queues `t` to run at the current instant, after everything already queued.
  void post(unique_task t) {
    if (ready_size_ == ready_.size()) grow_ready();
    ready_entry& e = ready_[(ready_head_ + ready_size_) & (ready_.size() - 1)];
    e.seq = next_key();
    e.fn = std::move(t);
    ++ready_size_;
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
  // A heap entry is 16 bytes, so the four children of a node share one
  // 64-byte cache line (see heap_ below). The sequence number lives in the
  // slot and is read only to break a tie between equal times. That is sound
  // because a slot is freed only once its entry has left the heap (run,
  // cancelled or taken), so every entry's (when, seq) stays fixed while it is
  // in the heap.
  struct heap_entry {
    vtime_ns when;
    std::uint32_t slot;
    std::uint32_t unused_ = 0;
  };
  struct slot_entry {
    unique_task fn;
    std::uint64_t seq = 0;         // of the entry that holds this slot
    std::uint32_t generation = 0;  // bumped when the entry runs or is cancelled
    bool live = false;             // scheduled, not yet run, cancelled or taken
  };
  static constexpr std::size_t heap_arity = 4;
  // The first entry sits this many places into the storage, so that the
  // children of node i (storage index 4i + 4 .. 4i + 7) start on a 64-byte
  // boundary of a 64-byte-aligned buffer.
  static constexpr std::size_t heap_pad = heap_arity - 1;

  // The tie-break key of the next entry: its sequence number, or under a
  // tie_perturbation a bijective scramble of it (distinct entries, distinct keys).
  std::uint64_t next_key() noexcept {
    const std::uint64_t seq = seq_++;
    if (tie_salt_ == 0) [[likely]]
      return seq;
    return scramble(seq);
  }
  std::uint64_t scramble(std::uint64_t seq) const noexcept;
  void note_order(std::uint64_t key) noexcept;

  bool heap_less(const heap_entry& a, const heap_entry& b) const noexcept {
    bool less = a.when < b.when;  // a flag, not a branch: sifting compares random times
    if (a.when == b.when) [[unlikely]]
      less = slots_[a.slot].seq < slots_[b.slot].seq;
    return less;
  }
  const heap_entry& heap_top() const noexcept { return heap_[heap_pad]; }
  std::size_t heap_size() const noexcept { return heap_.size() - heap_pad; }
  static std::size_t earliest_of_four(const heap_entry* c, bool& tie) noexcept;
  void heap_push(const heap_entry& e);
  void heap_pop_top() noexcept;
  // Removes the entry at logical index i (a cancelled or chosen timer).
  void heap_remove_at(std::size_t i) noexcept;
  // Puts `e` at logical index i and remembers where its slot's entry is.
  void heap_place(heap_entry* h, std::size_t i, const heap_entry& e) noexcept {
    h[i] = e;
    heap_pos_[e.slot] = static_cast<std::uint32_t>(i);
  }
  void release_slot(std::uint32_t slot) noexcept { free_slots_.push_back(slot); }
  void grow_ready();
  unique_task ready_pop_front() noexcept {
    ready_entry& e = ready_[ready_head_];
    ready_head_ = (ready_head_ + 1) & (ready_.size() - 1);
    --ready_size_;
    return std::move(e.fn);
  }

  enum class next_kind { none, ready, timer };
  next_kind peek_next(vtime_ns horizon_ns);
  void run_ready();
  void run_timer();
  // With a tie_chooser: gathers the candidates for the next step and runs the chosen one.
  void run_chosen(next_kind k);

  vtime_ns now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::size_t live_timers_ = 0;
  bool running_ = false;
  bool stop_requested_ = false;
  bool tearing_down_ = false;
  std::vector<ready_entry> ready_;  // a ring: capacity a power of two (or 0)
  std::size_t ready_head_ = 0;
  std::size_t ready_size_ = 0;
  // 4-ary min-heap on (when, seq), after heap_pad unused entries.
  std::vector<heap_entry, detail::cache_line_allocator<heap_entry>> heap_;
  std::vector<slot_entry> slots_;
  std::vector<std::uint32_t> heap_pos_;  // by slot: where its entry is in the heap (logical index)
  std::vector<std::uint32_t> free_slots_;  // capacity >= slots_.size(): push_back never allocates
  std::uint64_t tie_salt_ = 0;                // 0: keys are sequence numbers (the default)
  std::uint64_t order_hash_ = 0;              // under a tie_perturbation: the order run so far
  tie_perturbation* perturbation_ = nullptr;  // where the fingerprint goes
  tie_chooser* chooser_ = nullptr;            // decides every choice point (null: the default order)
  bool track_order_ = false;                  // perturbed or chosen: keep order_hash_
  struct candidate {
    std::uint64_t key;
    std::uint32_t slot;  // no_slot: the oldest posted entry
  };
  static constexpr std::uint32_t no_slot = UINT32_MAX;
  std::vector<candidate> candidates_;  // run_chosen's scratch
  std::vector<std::size_t> due_walk_;  // run_chosen's scratch
};

}  // namespace admit::sim

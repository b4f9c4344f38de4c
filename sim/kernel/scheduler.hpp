// scheduler: the single-threaded, virtual-time event loop of one simulation run.
//
// Model. The scheduler owns a virtual clock (`now_ns`, int64 nanoseconds) and
// two queues: a ready queue of work posted "for now", and a timer queue of work
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
// grows; the pending timers are a radix heap on time (timer_queue.hpp) of
// 24-byte (time, key, slot, generation) entries whose tasks live in a slot
// table, so moving an entry never moves a task. A push or a pop costs O(1)
// amortized and walks its memory in order, where a heap of 100,000 timers
// missed the cache at every level. A cancelled timer frees its slot at once
// and its entry is dropped when it reaches the front (or by a sweep, once
// dead entries outnumber the live ones): the slot's generation says which
// entries are dead. Once the queues have grown to a run's peak,
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
#include "sim/kernel/timer_queue.hpp"
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
  struct slot_entry {
    unique_task fn;
    std::uint64_t seq = 0;         // of the entry that holds this slot
    std::uint32_t generation = 0;  // bumped when the entry runs or is cancelled
    bool live = false;             // scheduled, not yet run, cancelled or taken
  };

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

  // A queue entry is live while its slot's generation is still the one it was scheduled under.
  bool entry_live(const timer_entry& e) const noexcept { return slots_[e.slot].generation == e.generation; }
  // Brings the earliest live timer to the queue's front; false when there is none.
  bool settle_timers() {
    return queue_.settle([this](const timer_entry& e) { return entry_live(e); });
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
  timer_queue queue_;  // the pending timers (and cancelled ones not yet dropped)
  std::vector<slot_entry> slots_;
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
};

}  // namespace admit::sim

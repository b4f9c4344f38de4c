// timer_queue: the scheduler's pending timers, a radix heap on virtual time.
//
// Model. Entries are (when, key, slot, generation); the queue yields them in
// (when, key) order, which is the kernel's (time, sequence) order (the key is
// the sequence number, or its scramble under a tie_perturbation). Time is
// monotone: nothing is pushed earlier than the last entry taken out, which
// the scheduler guarantees by clamping to its clock.
//
// Why a radix heap. A binary or 4-ary heap of 100,000 timers (a busy fleet of
// the lease world: a backoff or socket timer per worker) sifts through
// log(n) levels per event, and the deep levels miss the cache on every pop.
// Here an entry lives in bucket b = the position of the highest bit in which
// its time differs from the floor (bucket 0: equal to the floor). Taking out
// the earliest time empties the least non-empty bucket into lower ones, and
// an entry only ever moves down, so it moves at most 64 times and usually a
// few; every move appends to a vector, so the memory is read and written in
// order. Bucket 0 holds the entries due at the floor, the only ones compared
// by key: a small binary heap (by key), usually of one entry.
//
// Peeking moves the floor. To find the next time the queue empties a bucket
// and sets the floor to that bucket's earliest time, but the scheduler may
// then run posted work first, which schedules timers between its clock and
// that floor. Those go to a small binary heap on (when, key) beside the
// buckets (`under_`): everything in it is earlier than the floor, so it is
// served first. It holds only the timers scheduled into the gap before the
// next bucketed time, usually none or a few.
//
// Cancellation is lazy. A cancelled entry stays where it is and is dropped
// when it reaches the front; `live(entry)` (the scheduler's generation table)
// says which entries are still wanted. So that dead entries cannot pile up (a
// run that cancels most of its timeouts), the queue sweeps them out once they
// outnumber the entries pushed and still in it by more than half: amortized
// O(1) per cancellation, and the queue's size stays below twice the live
// entries plus a constant.
//
// Order does not depend on an address or on the bucket layout: (when, key)
// is a total order on distinct keys, and this is a priority queue on it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/kernel/vtime.hpp"

namespace admit::sim {

struct timer_entry {
  vtime_ns when;
  std::uint64_t key;         // the tie-break: sequence number (or its scramble)
  std::uint32_t slot;        // the scheduler's slot holding the task
  std::uint32_t generation;  // the slot's generation when scheduled: live while it still matches
};

// A deliberately broken variant for the property test (tests/kernel/timer_queue_test.cpp)
// that shows the test can fail: bucket 0 in arrival order instead of key order.
enum class timer_queue_mutation { none, ties_in_arrival_order };

template <timer_queue_mutation Mutation = timer_queue_mutation::none>
class basic_timer_queue {
 public:
  // Entries in the queue, dead ones included.
  std::size_t size() const noexcept { return size_; }

  void push(const timer_entry& e) {
    ADMIT_ASSERT(e.when >= last_out_, "a timer cannot be pushed before the last one taken out");
    if (e.when < floor_) {
      under_.push_back(e);
      std::push_heap(under_.begin(), under_.end(), later_than);
      ++size_;
      return;
    }
    const unsigned b = bucket_of(e.when);
    if (b == 0)
      front_push(e);
    else {
      buckets_[b].push_back(e);
      occupied_ |= std::uint64_t{1} << (b - 1);
    }
    ++size_;
  }

  // One entry was cancelled in place (its `live` turned false): counted for the sweep.
  void note_dead() noexcept { ++dead_; }
  bool sweep_due() const noexcept { return dead_ > 64 && 2 * dead_ > size_; }

  // Brings the earliest live entry to the front, dropping dead ones on the
  // way. Returns false when no live entry is left (the queue is then empty).
  template <class Live>
  bool settle(const Live& live) {
    if (sweep_due()) [[unlikely]]
      sweep(live);
    for (;;) {
      while (!under_.empty()) {
        if (live(under_.front())) return true;
        under_pop();
        --size_;
        ADMIT_ASSERT(dead_ > 0, "a dead entry was counted when it was cancelled");
        --dead_;
      }
      while (front_size() != 0) {
        if (live(front_.front_entry())) return true;
        front_pop();
        --size_;
        ADMIT_ASSERT(dead_ > 0, "a dead entry was counted when it was cancelled");
        --dead_;
      }
      if (occupied_ == 0) {
        ADMIT_ASSERT(size_ == 0, "entries left outside the buckets");
        dead_ = 0;
        return false;
      }
      refill_front(live);
    }
  }

  // The earliest entry; valid after settle() returned true.
  const timer_entry& front() const noexcept { return under_.empty() ? front_.front_entry() : under_.front(); }
  void pop_front() noexcept {
    last_out_ = front().when;
    if (!under_.empty())
      under_pop();
    else
      front_pop();
    --size_;
  }
  // The entry that will be at the front next unless a bucket must be emptied
  // first, or null: for the caller to prefetch what it points to.
  const timer_entry* next_hint() const noexcept {
    if (!under_.empty()) return &under_.front();
    return front_size() != 0 ? &front_.front_entry() : nullptr;
  }
  // Every entry due at `t`, live and dead, in no particular order (run_chosen's
  // candidates); complete after settle() when `t` is front().when.
  template <class F>
  void for_each_due(vtime_ns t, F&& f) const {
    for (const timer_entry& e : under_)
      if (e.when == t) f(e);
    if (floor_ == t) front_.for_each(f);
  }
  void clear() noexcept {
    for (auto& b : buckets_) b.clear();
    under_.clear();
    front_.clear();
    occupied_ = 0;
    size_ = 0;
    dead_ = 0;
  }

  // Drops every dead entry now.
  template <class Live>
  void sweep(const Live& live) {
    std::size_t kept = 0;
    for (unsigned b = 1; b < buckets_.size(); ++b) {
      std::vector<timer_entry>& v = buckets_[b];
      v.erase(std::remove_if(v.begin(), v.end(), [&](const timer_entry& e) { return !live(e); }), v.end());
      if (v.empty()) occupied_ &= ~(std::uint64_t{1} << (b - 1));
      kept += v.size();
    }
    front_.remove_dead(live);
    kept += front_size();
    under_.erase(std::remove_if(under_.begin(), under_.end(), [&](const timer_entry& e) { return !live(e); }),
                 under_.end());
    std::make_heap(under_.begin(), under_.end(), later_than);
    kept += under_.size();
    size_ = kept;
    dead_ = 0;
  }

 private:
  // (when, key) order, for under_.
  static bool later_than(const timer_entry& a, const timer_entry& b) noexcept {
    return a.when != b.when ? a.when > b.when : a.key > b.key;
  }
  void under_pop() noexcept {
    std::pop_heap(under_.begin(), under_.end(), later_than);
    under_.pop_back();
  }

  unsigned bucket_of(vtime_ns when) const noexcept {
    const std::uint64_t diff = static_cast<std::uint64_t>(when) ^ static_cast<std::uint64_t>(floor_);
    return diff == 0 ? 0U : static_cast<unsigned>(64 - std::countl_zero(diff));
  }

  // Bucket 0 is empty: the least non-empty bucket's earliest live time
  // becomes the floor, and its live entries move to lower buckets (those at
  // the floor to bucket 0). Its dead entries are dropped here rather than
  // moved down bucket by bucket (a waiter's deadline, cancelled when it was
  // promoted, would otherwise move a few times before it reached the front).
  template <class Live>
  void refill_front(const Live& live) {
    const unsigned b = static_cast<unsigned>(std::countr_zero(occupied_)) + 1;
    std::vector<timer_entry>& v = buckets_[b];
    occupied_ &= ~(std::uint64_t{1} << (b - 1));
    std::size_t kept = 0;
    vtime_ns least = std::numeric_limits<vtime_ns>::max();
    for (const timer_entry& e : v) {
      if (!live(e)) continue;
      least = e.when < least ? e.when : least;
      v[kept++] = e;
    }
    const std::size_t dropped = v.size() - kept;
    ADMIT_ASSERT(dead_ >= dropped, "a dead entry was counted when it was cancelled");
    dead_ -= dropped;
    size_ -= dropped;
    if (kept == 0) {
      v.clear();
      return;  // the caller looks at the next bucket
    }
    floor_ = least;
    for (std::size_t i = 0; i < kept; ++i) {
      const timer_entry& e = v[i];
      const unsigned to = bucket_of(e.when);
      ADMIT_ASSERT(to < b, "a redistributed entry moves to a lower bucket");
      if (to == 0)
        front_push(e);
      else {
        buckets_[to].push_back(e);
        occupied_ |= std::uint64_t{1} << (to - 1);
      }
    }
    v.clear();
  }

  // Bucket 0: a binary min-heap on key (all its entries are due at the floor).
  struct key_heap {
    std::vector<timer_entry> v;
    std::size_t head = 0;  // the mutant's FIFO start; 0 for the heap
    static bool later(const timer_entry& a, const timer_entry& b) noexcept { return a.key > b.key; }
    std::size_t size() const noexcept { return v.size() - head; }
    const timer_entry& front_entry() const noexcept { return v[head]; }
    // Usually it holds one entry: that case skips the heap's machinery.
    void push(const timer_entry& e) {
      v.push_back(e);
      if constexpr (Mutation == timer_queue_mutation::none)
        if (v.size() > 1) std::push_heap(v.begin(), v.end(), later);
    }
    void pop() noexcept {
      if constexpr (Mutation == timer_queue_mutation::none) {
        if (v.size() > 1) std::pop_heap(v.begin(), v.end(), later);
        v.pop_back();
      } else if (++head == v.size()) {
        v.clear();
        head = 0;
      }
    }
    template <class F>
    void for_each(F& f) const {
      for (std::size_t i = head; i < v.size(); ++i) f(v[i]);
    }
    template <class Live>
    void remove_dead(const Live& live) {
      v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
      v.erase(std::remove_if(v.begin(), v.end(), [&](const timer_entry& e) { return !live(e); }), v.end());
      if constexpr (Mutation == timer_queue_mutation::none) std::make_heap(v.begin(), v.end(), later);
    }
    void clear() noexcept {
      v.clear();
      head = 0;
    }
  };

  std::size_t front_size() const noexcept { return front_.size(); }
  void front_push(const timer_entry& e) { front_.push(e); }
  void front_pop() noexcept { front_.pop(); }

  vtime_ns floor_ = 0;     // the buckets' base: bucket 0 holds the entries due at it
  vtime_ns last_out_ = 0;  // the time of the last entry taken out
  std::uint64_t occupied_ = 0;  // bit b-1 set: bucket b (1..64) is not empty
  std::size_t size_ = 0;
  std::size_t dead_ = 0;
  key_heap front_;
  std::vector<timer_entry> under_;  // a binary heap on (when, key): the entries earlier than floor_
  std::array<std::vector<timer_entry>, 65> buckets_;  // [0] unused: bucket 0 is front_
};

using timer_queue = basic_timer_queue<>;

}  // namespace admit::sim

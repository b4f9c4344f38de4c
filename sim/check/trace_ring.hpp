// trace_ring: the last entries a run traced, in bounded memory.
//
// A world keeps its own small entry type (text is made only for the entries
// a report shows); the ring keeps the newest `capacity` of them, reusing the
// slots of the oldest, counts every entry offered (a violation records how
// many preceded it) and every one that fell out, and stops keeping entries
// once frozen (at the first violation: the report shows what led to it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gate/admit_assert.hpp"

namespace admit::check {

template <class Entry>
class trace_ring {
 public:
  explicit trace_ring(std::size_t capacity) : cap_(capacity) {}

  // The slot to fill with the next entry, or nullptr when none is kept
  // (capacity 0, or frozen). The entry is counted either way. A reused slot
  // still holds the entry it kept: the caller overwrites every field.
  Entry* next() {
    ++total_;
    if (frozen_ || cap_ == 0) return nullptr;
    if (entries_.size() < cap_) return &entries_.emplace_back();
    ++dropped_;  // the oldest entry falls out
    Entry* slot = &entries_[head_];
    if (++head_ == cap_) head_ = 0;
    return slot;
  }

  void freeze() noexcept { frozen_ = true; }
  bool frozen() const noexcept { return frozen_; }

  std::uint64_t total() const noexcept { return total_; }    // entries offered
  std::uint64_t dropped() const noexcept { return dropped_; }  // kept once, then fell out
  std::size_t size() const noexcept { return entries_.size(); }
  std::size_t capacity() const noexcept { return cap_; }

  // Calls f(entry) for every kept entry, oldest first.
  template <class F>
  void for_each(F&& f) const {
    ADMIT_ASSERT(entries_.size() <= cap_ && (head_ == 0 || entries_.size() == cap_),
                 "the ring wraps only once full");
    ADMIT_ASSERT(total_ >= entries_.size() + dropped_, "every kept or dropped entry was counted");
    for (std::size_t i = 0; i < entries_.size(); ++i) f(entries_[(head_ + i) % entries_.size()]);
  }

 private:
  std::size_t cap_;
  std::vector<Entry> entries_;  // a ring once full: head_ is the oldest entry
  std::size_t head_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t dropped_ = 0;
  bool frozen_ = false;
};

}  // namespace admit::check

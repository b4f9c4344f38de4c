// trace_ring: the last entries a run traced, in bounded memory.
//
// A world keeps its own small entry type (text is made only for the entries
// a report shows); the ring keeps the newest `capacity` of them, reusing the
// slots of the oldest, counts every entry offered (a violation records how
// many preceded it) and every one that fell out, and stops keeping entries
// once frozen (at the first violation: the report shows what led to it).
//
// A stream (stream_to) gets every entry as well, in order, whatever the ring
// keeps: the whole run's story in bounded memory (admitsim's --trace). The
// caller fills a slot after next() returns it, so an entry is handed on when
// the next one is asked for, or at flush(); while streaming, an entry the
// ring does not keep (capacity 0, or frozen) is filled in one spare slot.
// One flag (`slow_`) stands for "frozen, capacity 0 or streaming", so the
// common case, a ring that keeps the entry, still costs one test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gate/admit_assert.hpp"

namespace admit::check {

// Where a ring hands each filled entry: `take(context, entry)`. It must not
// throw (it runs at teardown too): a sink that cannot write records why.
template <class Entry>
struct trace_stream {
  void (*take)(void* context, const Entry& e) noexcept = nullptr;
  void* context = nullptr;
};

template <class Entry>
class trace_ring {
 public:
  explicit trace_ring(std::size_t capacity) : cap_(capacity), slow_(capacity == 0) {}

  // The slot to fill with the next entry, or nullptr when none is kept
  // (capacity 0, or frozen) and none is streamed. The entry is counted
  // either way. A reused slot still holds the entry it kept: the caller
  // overwrites every field.
  Entry* next() {
    ++total_;
    if (slow_) [[unlikely]] return stream_.take == nullptr ? nullptr : next_streamed();
    return keep();
  }

  // Every entry from now on also goes to `s` (set before the first entry).
  void stream_to(trace_stream<Entry> s) {
    ADMIT_ASSERT(total_ == 0, "a stream gets the whole run");
    ADMIT_ASSERT(s.take != nullptr, "a stream takes its entries");
    stream_ = s;
    slow_ = true;
  }
  // Hands the last filled entry to the stream, if any is waiting: the end
  // of the run (nothing is traced after it), or before the stream goes.
  void flush() noexcept {
    if (pending_ == nullptr) return;
    stream_.take(stream_.context, *pending_);
    pending_ = nullptr;
  }

  void freeze() noexcept {
    frozen_ = true;
    slow_ = true;
  }
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
  Entry* keep() {
    if (entries_.size() < cap_) return &entries_.emplace_back();
    ++dropped_;  // the oldest entry falls out
    Entry* slot = &entries_[head_];
    if (++head_ == cap_) head_ = 0;
    return slot;
  }

  // Out of line: a run without a stream never comes here. The entry before
  // is handed on first, so its slot (or the spare) may be reused, and no
  // kept slot moves (keep() may grow entries_) while it is pending.
  [[gnu::noinline]] Entry* next_streamed() {
    flush();
    pending_ = frozen_ || cap_ == 0 ? &spare_ : keep();
    return pending_;
  }

  std::size_t cap_;
  std::vector<Entry> entries_;  // a ring once full: head_ is the oldest entry
  std::size_t head_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t dropped_ = 0;
  bool frozen_ = false;
  bool slow_;  // frozen_, cap_ == 0, or a stream: next() leaves the common case
  trace_stream<Entry> stream_;
  Entry* pending_ = nullptr;  // filled by the caller, not yet handed to the stream
  Entry spare_{};             // the slot of a streamed entry the ring does not keep
};

}  // namespace admit::check

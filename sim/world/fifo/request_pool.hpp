// request_pool: the request states of one FIFO run, reused.
//
// A run allocates only as many states as are ever in flight at once: a state
// whose last reference goes returns to the free list (recycle), cleared but
// keeping its strings' storage, and the next arrival takes it again.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/world/fifo/request.hpp"

namespace admit::world::fifo_world {

class request_pool {
 public:
  request_pool() = default;
  request_pool(const request_pool&) = delete;
  request_pool& operator=(const request_pool&) = delete;

  // A state as new, with one reference.
  req_ptr take() {
    if (free_.empty()) [[unlikely]]
      return req_ptr(grow());
    request_state* p = free_.back();
    free_.pop_back();
    ADMIT_ASSERT(p->pool.pooled, "a state on the free list is marked pooled");
    ADMIT_ASSERT(p->refs.count() == 0, "no reference to a pooled state is left");
    ADMIT_ASSERT(!p->handler.accepted, "a reused state was cleared (not accepted)");
    ADMIT_ASSERT(!p->out.responded, "a reused state was cleared (not responded)");
    ADMIT_ASSERT(!p->arena.in_use(), "a reused state's arena holds no operation");
    ADMIT_ASSERT(!p->cancel.has_handler(), "a reused state has no cancellation handler");
    p->pool.pooled = false;
    return req_ptr(p);
  }

  // The last reference to `p` went.
  void put_back(request_state* p) noexcept {
    p->clear();
    p->pool.pooled = true;
    free_.push_back(p);  // never allocates: see take()
  }

  // Calls f(state) for every state some reference still holds, in no
  // particular order (the caller sorts what it reports).
  template <class F>
  void for_each_live(F&& f) const {
    for (const auto& p : all_)
      if (p->refs.count() > 0) f(*p);
  }

  // O(n), at the end of a run: every state is either held or on the free list, once.
  void check_accounts() const {
    std::size_t pooled = 0;
    for (const auto& p : all_) {
      ADMIT_ASSERT(p->pool.pooled == (p->refs.count() == 0), "a state is pooled exactly when nothing refers to it");
      pooled += p->pool.pooled;
    }
    ADMIT_ASSERT(pooled == free_.size(), "every pooled state is on the free list once");
    ADMIT_ASSERT(free_.capacity() >= all_.size(), "recycling never allocates");
  }

 private:
  // Out of line: a run allocates only as many states as are ever in flight.
  [[gnu::noinline]] request_state* grow() {
    all_.push_back(std::make_unique<request_state>());
    // recycle() runs in destructors, also while a bad_alloc unwinds: room
    // for every state is kept so that it never allocates.
    if (free_.capacity() < all_.size()) free_.reserve(2 * all_.size());
    request_state* p = all_.back().get();
    p->pool.owner = this;
    return p;
  }

  std::vector<std::unique_ptr<request_state>> all_;
  std::vector<request_state*> free_;
};

}  // namespace admit::world::fifo_world

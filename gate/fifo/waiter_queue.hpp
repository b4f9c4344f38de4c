// waiter_queue: the FIFO gate's queue of waiting tickets, oldest first.
//
// A waiter can leave from the middle (its deadline passed, or its caller gave
// up), so the queue is a doubly linked list threaded through a slab of nodes
// addressed by 32-bit ids: push, pop and remove are O(1), and a removed node
// goes on a free list for the next push. The slab only grows, so once the
// gate has seen its peak number of waiters the queue never allocates again,
// and no tombstones are left behind to skip or compact.
//
// Every waiter gets the same wait deadline and time only moves forward, so
// deadlines never decrease from front to back: the front holds the earliest.
#pragma once

#include <cstdint>
#include <vector>

#include "gate/admit_assert.hpp"

namespace admit::fifo {

struct waiter {
  std::uint64_t ticket;
  std::int64_t deadline_ns;
};

class waiter_queue {
 public:
  using node_id = std::uint32_t;
  static constexpr node_id nil = 0xFFFF'FFFFu;
  // Ids stay below this bound so that an index can keep values above it as
  // markers of its own.
  static constexpr node_id max_node_count = 0xFFFF'FFF0u;

  bool empty() const noexcept { return size_ == 0; }
  std::int64_t size() const noexcept { return size_; }

  const waiter& front() const {
    ADMIT_ASSERT(head_ != nil, "front() of an empty waiter queue");
    return nodes_[head_].w;
  }

  const waiter& at(node_id id) const {
    ADMIT_ASSERT(id < nodes_.size(), "waiter node id out of range");
    return nodes_[id].w;
  }

  node_id push_back(waiter w) {
    if (tail_ != nil) {
      ADMIT_ASSERT(w.deadline_ns >= nodes_[tail_].w.deadline_ns,
                   "waiter deadlines must not decrease from front to back");
    }
    node_id id;
    if (free_ != nil) {
      id = free_;
      free_ = nodes_[id].next;
    } else {
      ADMIT_ASSERT(nodes_.size() < max_node_count, "waiter queue node ids exhausted");
      id = static_cast<node_id>(nodes_.size());
      nodes_.push_back(node{});
    }
    nodes_[id] = node{w, tail_, nil};
    if (tail_ != nil) {
      nodes_[tail_].next = id;
    } else {
      head_ = id;
    }
    tail_ = id;
    ++size_;
    return id;
  }

  waiter pop_front() {
    const waiter w = front();
    remove(head_);
    return w;
  }

  void remove(node_id id) {
    ADMIT_ASSERT(id < nodes_.size(), "waiter node id out of range");
    node& n = nodes_[id];
    if (n.prev != nil) {
      nodes_[n.prev].next = n.next;
    } else {
      ADMIT_ASSERT(head_ == id, "a node without predecessor must be the head");
      head_ = n.next;
    }
    if (n.next != nil) {
      nodes_[n.next].prev = n.prev;
    } else {
      ADMIT_ASSERT(tail_ == id, "a node without successor must be the tail");
      tail_ = n.prev;
    }
    n.prev = nil;
    n.next = free_;
    free_ = id;
    --size_;
    ADMIT_ASSERT(size_ >= 0, "waiter queue size went negative");
  }

 private:
  struct node {
    waiter w{};
    node_id prev = nil;
    node_id next = nil;
  };

  std::vector<node> nodes_;
  node_id head_ = nil;
  node_id tail_ = nil;
  node_id free_ = nil;
  std::int64_t size_ = 0;
};

}  // namespace admit::fifo

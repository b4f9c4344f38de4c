// The FIFO world's parts on their own: the queue order its monitors keep per
// gate, and the assertions it makes, tripped by calls out of order.
#include <catch2/catch.hpp>

#include "gate/admit_assert.hpp"
#include "sim/world/fifo/queue_order.hpp"

using namespace admit;
using world::fifo_world::queue_order;

TEST_CASE("queue_order keeps the queued tickets in order and skips those that left") {
  // Goal: the oldest is the longest waiter still queued. Method: three tickets, the first leaves.
  queue_order q;
  CHECK_FALSE(q.any_recorded());
  CHECK(q.oldest() == nullptr);
  q.queued(3);
  q.queued(5);
  q.queued(8);
  REQUIRE(q.still_queued(3) != nullptr);
  q.still_queued(3)->left = true;
  CHECK(q.still_queued(3) == nullptr);
  CHECK(q.still_queued(4) == nullptr);
  REQUIRE(q.oldest() != nullptr);
  CHECK(q.oldest()->ticket == 5);
  q.pop_oldest();
  CHECK(q.oldest()->ticket == 8);
  q.pop_oldest();
  CHECK(q.oldest() == nullptr);
  CHECK_FALSE(q.any_recorded());
}

TEST_CASE("queue_order refuses a ticket older than the last one queued, even once the queue is empty") {
  // Goal: the order assertion fires. Method: a ticket out of order, then after the queue emptied.
  queue_order q;
  q.queued(5);
  CHECK_THROWS_AS(q.queued(5), admit::assertion_failure);
  CHECK_THROWS_AS(q.queued(4), admit::assertion_failure);
  q.pop_oldest();
  CHECK_THROWS_AS(q.queued(2), admit::assertion_failure);  // the lifetime's tickets only grow
  CHECK_THROWS_AS(q.queued(fifo::no_ticket), admit::assertion_failure);
  CHECK_THROWS_AS(q.pop_oldest(), admit::assertion_failure);  // nothing queued to promote
  // A new gate lifetime starts its tickets over.
  q.clear();
  q.queued(1);
  CHECK(q.oldest()->ticket == 1);
}

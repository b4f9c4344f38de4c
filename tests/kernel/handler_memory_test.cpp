// handler_memory: the arena, the in-place cancellation slot and the intrusive
// count, alone and as a sim_timer's handler sees them through Asio.
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/kernel/handler_memory.hpp"
#include "sim/kernel/sim_timer.hpp"

using namespace admit::sim;
namespace asio = boost::asio;
using boost::system::error_code;

namespace {

using arena64 = handler_arena<64>;
using storage32 = cancellation_storage<32>;
using slot32 = inplace_cancellation_slot<32>;

// A state as a handler chain owns it: count, arena and cancellation handler.
struct state {
  ref_count refs;
  handler_arena<128> arena;  // a sim_timer's operation with this handler needs more than 64 bytes
  storage32 cancel;
  int recycled = 0;
};
void recycle_state(state* s) noexcept { ++s->recycled; }
using state_ptr = intrusive_ptr<state, &recycle_state>;

// A handler that names the state's memory as its own.
struct waiting_handler {
  state_ptr s;
  std::vector<error_code>* seen;
  using allocator_type = arena_allocator<void, handler_arena<128>>;
  allocator_type get_allocator() const noexcept { return allocator_type(s->arena); }
  void operator()(error_code ec) { seen->push_back(ec); }
};

struct counting_cancel {
  int* calls;
  void operator()(asio::cancellation_type_t) { ++*calls; }
};
struct destroy_counting_cancel {
  int* destroyed;
  destroy_counting_cancel(int* d) : destroyed(d) {}
  destroy_counting_cancel(const destroy_counting_cancel&) = delete;
  ~destroy_counting_cancel() { ++*destroyed; }
  void operator()(asio::cancellation_type_t) {}
};
// Clears its own slot from inside its call, as a cancelled operation does when it completes.
struct self_clearing_cancel {
  storage32* s;
  int* calls;
  void operator()(asio::cancellation_type_t) {
    ++*calls;
    s->clear();
  }
};

}  // namespace

TEST_CASE("the arena is handed out once at a time and given back with its size", "[handler_memory]") {
  // Goal: one block at a time, and the bookkeeping asserts. Method: take, take again, give back wrongly.
  arena64 a;
  void* p = a.take(48, alignof(std::max_align_t));
  REQUIRE(p != nullptr);
  CHECK(a.owns(p));
  CHECK(a.in_use());
  CHECK(a.take(8, 8) == nullptr);  // never handed out twice
  CHECK_THROWS_AS(a.give_back(p, 40), admit::assertion_failure);
  a.give_back(p, 48);
  CHECK_FALSE(a.in_use());
  CHECK_THROWS_AS(a.give_back(p, 48), admit::assertion_failure);  // given back twice
  int other = 0;
  CHECK_THROWS_AS(a.give_back(&other, 4), admit::assertion_failure);
  CHECK(a.take(65, 8) == nullptr);                              // too big
  CHECK(a.take(8, 2 * alignof(std::max_align_t)) == nullptr);  // aligned beyond the buffer
  CHECK(a.take(64, 8) != nullptr);
}

TEST_CASE("arena_allocator places the first block in the arena and the next on the heap", "[handler_memory]") {
  // Goal: allocate_shared (as finish_worker does) lands in the arena; a second live block does not.
  arena64 a;
  arena_allocator<int, arena64> alloc(a);
  std::shared_ptr<int> first = std::allocate_shared<int>(alloc, 1);
  CHECK(a.in_use());
  std::shared_ptr<int> second = std::allocate_shared<int>(alloc, 2);
  CHECK(*first == 1);
  CHECK(*second == 2);
  first.reset();
  CHECK_FALSE(a.in_use());
  second.reset();
  CHECK_FALSE(a.in_use());
  arena_allocator<long, arena64> rebound(alloc);
  CHECK(rebound == alloc);
  arena64 b;
  CHECK(arena_allocator<int, arena64>(b) != alloc);
}

TEST_CASE("the cancellation storage calls, replaces and destroys its one handler", "[handler_memory]") {
  // Goal: emplace replaces (destroying the old one), emit calls, a handler may clear itself inside its call.
  storage32 s;
  slot32 slot(&s);
  CHECK(slot.is_connected());
  CHECK_FALSE(slot.has_handler());
  s.emit(asio::cancellation_type::terminal);  // no handler: nothing happens
  int calls = 0;
  slot.assign(counting_cancel{&calls});
  CHECK(slot.has_handler());
  s.emit(asio::cancellation_type::terminal);
  s.emit(asio::cancellation_type::terminal);
  CHECK(calls == 2);
  int destroyed = 0;
  slot.emplace<destroy_counting_cancel>(&destroyed);
  slot.emplace<counting_cancel>(counting_cancel{&calls});
  CHECK(destroyed == 1);
  slot.emplace<self_clearing_cancel>(self_clearing_cancel{&s, &calls});
  s.emit(asio::cancellation_type::terminal);
  CHECK(calls == 3);
  CHECK_FALSE(slot.has_handler());
  {
    storage32 gone;
    inplace_cancellation_slot<32>(&gone).emplace<destroy_counting_cancel>(&destroyed);
  }
  CHECK(destroyed == 2);  // the storage's end destroys the handler it holds
  slot32 unconnected(nullptr);
  CHECK_FALSE(unconnected.is_connected());
  CHECK_FALSE(unconnected.has_handler());
  unconnected.clear();
  CHECK_THROWS_AS(unconnected.emplace<counting_cancel>(counting_cancel{&calls}), admit::assertion_failure);
}

TEST_CASE("the intrusive count recycles on the last reference and never goes below zero", "[handler_memory]") {
  // Goal: copies and moves count right, the hook runs once, an extra drop asserts.
  state st;
  {
    state_ptr a(&st);
    state_ptr b = a;
    CHECK(st.refs.count() == 2);
    state_ptr c = std::move(b);
    CHECK(st.refs.count() == 2);
    CHECK_FALSE(b);
    a = state_ptr();
    CHECK(st.refs.count() == 1);
    CHECK(st.recycled == 0);
  }
  CHECK(st.recycled == 1);
  CHECK(st.refs.count() == 0);
  CHECK_THROWS_AS(st.refs.drop(), admit::assertion_failure);
}

TEST_CASE("a sim_timer's operation lives in the arena and its cancellation in the storage", "[handler_memory]") {
  // Goal: what the FIFO world relies on, through Asio's associators. Method: a wait, then a cancelled wait.
  scheduler sched;
  sim_timer t(sched);
  state st;
  std::vector<error_code> seen;
  t.expires_after(10);
  t.async_wait(asio::bind_cancellation_slot(slot32(&st.cancel), waiting_handler{state_ptr(&st), &seen}));
  CHECK(st.arena.in_use());  // the timer's operation
  CHECK(st.cancel.has_handler());
  sched.run();
  REQUIRE(seen.size() == 1);
  CHECK_FALSE(seen[0]);
  CHECK_FALSE(st.arena.in_use());
  CHECK_FALSE(st.cancel.has_handler());
  CHECK(st.recycled == 1);

  t.expires_after(10);
  t.async_wait(asio::bind_cancellation_slot(slot32(&st.cancel), waiting_handler{state_ptr(&st), &seen}));
  st.cancel.emit(asio::cancellation_type::terminal);
  sched.run();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == asio::error::operation_aborted);
  CHECK_FALSE(st.arena.in_use());
  CHECK(st.recycled == 2);
}

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/kernel/prng.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/sim_executor.hpp"

using namespace admit::sim;

TEST_CASE("timers run in time order and ties run in insertion order", "[scheduler]") {
  // Goal: pin the tie rule. Method: schedule several entries at equal instants out of order.
  scheduler s;
  std::vector<std::string> log;
  s.schedule_at(20, [&] { log.push_back("b@20#1"); });
  s.schedule_at(10, [&] { log.push_back("a@10#2"); });
  s.schedule_at(20, [&] { log.push_back("c@20#3"); });
  s.schedule_at(10, [&] { log.push_back("d@10#4"); });
  s.schedule_at(20, [&] { log.push_back("e@20#5"); });
  CHECK(s.run() == run_status::idle);
  CHECK(log == std::vector<std::string>{"a@10#2", "d@10#4", "b@20#1", "c@20#3", "e@20#5"});
  CHECK(s.now_ns() == 20);
  CHECK(s.events_run() == 5);
}

TEST_CASE("posts and due timers at one instant share one sequence", "[scheduler]") {
  // Goal: a timer due now that was scheduled before a post runs first, and vice versa.
  // Method: from inside an event at t=5, schedule a timer for t=5, then post; and the reverse.
  scheduler s;
  std::vector<std::string> log;
  s.schedule_at(5, [&] {
    s.schedule_at(5, [&] { log.push_back("timer-first"); });
    s.post([&] { log.push_back("post-second"); });
    s.post([&] { log.push_back("post-third"); });
    s.schedule_at(5, [&] { log.push_back("timer-fourth"); });
  });
  s.run();
  CHECK(log == std::vector<std::string>{"timer-first", "post-second", "post-third", "timer-fourth"});
}

TEST_CASE("next_sequence counts the sequence numbers drawn, cancelled timers included", "[scheduler]") {
  // Goal: the report's diagnostics.sequence_numbers is the count drawn. Method: three timers (one
  // cancelled) and two posts, one of them from inside an event; five numbers drawn, four events run.
  scheduler s;
  CHECK(s.next_sequence() == 0);
  s.schedule_at(10, [&] { s.post([] {}); });
  timer_handle gone = s.schedule_at(20, [] {});
  s.schedule_at(30, [] {});
  s.post([] {});
  CHECK(s.next_sequence() == 4);
  s.cancel(gone);
  s.run();
  CHECK(s.next_sequence() == 5);
  CHECK(s.events_run() == 4);
}

TEST_CASE("time jumps to the next timer and never moves back", "[scheduler]") {
  // Goal: virtual time advances only to due instants. Method: record now_ns inside events.
  scheduler s;
  std::vector<vtime_ns> seen;
  s.schedule_after(3 * sec, [&] { seen.push_back(s.now_ns()); });
  s.schedule_after(1 * ms, [&] {
    seen.push_back(s.now_ns());
    s.schedule_after(1 * ms, [&] { seen.push_back(s.now_ns()); });
    s.schedule_at(0, [&] { seen.push_back(s.now_ns()); });  // in the past: runs now
  });
  s.run();
  CHECK(seen == std::vector<vtime_ns>{1 * ms, 1 * ms, 2 * ms, 3 * sec});
}

TEST_CASE("a cancelled timer does not run and its handle becomes inert", "[scheduler]") {
  // Goal: cancel removes exactly the named entry. Method: cancel one of three, cancel twice.
  scheduler s;
  int ran = 0;
  s.schedule_at(1, [&] { ran += 1; });
  timer_handle h = s.schedule_at(2, [&] { ran += 10; });
  s.schedule_at(3, [&] { ran += 100; });
  CHECK(s.pending() == 3);
  CHECK(s.cancel(h));
  CHECK_FALSE(s.cancel(h));
  CHECK(s.pending() == 2);
  s.run();
  CHECK(ran == 101);
  CHECK(s.now_ns() == 3);
  CHECK_FALSE(s.cancel(h));
}

TEST_CASE("cancelling timers anywhere in the heap keeps the order of the rest", "[scheduler]") {
  // Goal: a cancelled entry leaves the heap at once without disturbing it. Method: 2,000 timers at seeded
  // times (many ties), some cancelled before the run and some by running timers; every survivor runs once,
  // in (time, insertion) order, and no cancelled one runs.
  scheduler s;
  prng rng(77);
  constexpr int n = 2000;
  std::vector<timer_handle> handles(n);
  std::vector<vtime_ns> when(n);
  std::vector<bool> cancelled(n, false);
  std::vector<int> ran;
  for (int i = 0; i < n; ++i) {
    when[i] = static_cast<vtime_ns>(rng.uniform_u64(500));
    handles[i] = s.schedule_at(when[i], [&, i] {
      ran.push_back(i);
      // Every 7th timer cancels a later-scheduled one, which may sit anywhere in the heap.
      if (i % 7 == 0) {
        const int victim = static_cast<int>(rng.uniform_u64(n));
        if (s.cancel(handles[victim])) cancelled[victim] = true;
      }
    });
  }
  for (int i = 0; i < n; i += 3)
    if (rng.uniform_u64(2) == 0 && s.cancel(handles[i])) cancelled[i] = true;
  CHECK(s.run() == run_status::idle);
  std::vector<bool> seen(n, false);
  for (std::size_t k = 0; k < ran.size(); ++k) {
    const int i = ran[k];
    CHECK_FALSE(cancelled[i]);
    CHECK_FALSE(seen[i]);
    seen[i] = true;
    if (k > 0) {
      const int p = ran[k - 1];
      CHECK((when[p] < when[i] || (when[p] == when[i] && p < i)));
    }
  }
  for (int i = 0; i < n; ++i) CHECK(seen[i] != cancelled[i]);
}

TEST_CASE("a reused timer slot does not honour an old handle", "[scheduler]") {
  // Goal: generations protect slot reuse. Method: run an entry, reuse its slot, cancel via old handle.
  scheduler s;
  int ran = 0;
  timer_handle old = s.schedule_at(1, [&] { ran += 1; });
  s.run();
  timer_handle fresh = s.schedule_at(2, [&] { ran += 10; });
  CHECK(fresh.slot == old.slot);
  CHECK_FALSE(s.cancel(old));
  s.run();
  CHECK(ran == 11);
}

TEST_CASE("take removes a timer entry and hands its task back unrun", "[scheduler]") {
  // Goal: take() supports early completion. Method: take an entry, run it from the ready queue.
  scheduler s;
  std::vector<std::string> log;
  timer_handle h = s.schedule_at(100, [&] { log.push_back("taken"); });
  s.schedule_at(50, [&] { log.push_back("other"); });
  unique_task t = s.take(h);
  REQUIRE(static_cast<bool>(t));
  CHECK_FALSE(static_cast<bool>(s.take(h)));
  s.post(std::move(t));
  s.run();
  CHECK(log == std::vector<std::string>{"taken", "other"});
  CHECK(s.now_ns() == 50);
}

TEST_CASE("run stops at the event budget and at the horizon", "[scheduler]") {
  // Goal: every run is bounded. Method: a self-rescheduling event, run with limits.
  scheduler s;
  int ticks = 0;
  std::function<void()> tick = [&] {
    ++ticks;
    s.schedule_after(1 * sec, [&] { tick(); });
  };
  s.post([&] { tick(); });
  CHECK(s.run(run_limits{10, vtime_max}) == run_status::event_limit);
  CHECK(ticks == 10);
  CHECK(s.run(run_limits{UINT64_MAX, 20 * sec}) == run_status::time_limit);
  CHECK(ticks == 21);
  CHECK(s.now_ns() == 20 * sec);
  CHECK(s.run_until(25 * sec + 1) == run_status::time_limit);
  CHECK(s.now_ns() == 25 * sec + 1);
  CHECK(ticks == 26);
}

TEST_CASE("stop ends the run after the current event", "[scheduler]") {
  // Goal: stop() is honoured promptly. Method: stop from inside an event with more work queued.
  scheduler s;
  int ran = 0;
  s.post([&] { ++ran; s.stop(); });
  s.post([&] { ++ran; });
  CHECK(s.run() == run_status::stopped);
  CHECK(ran == 1);
  CHECK(s.run() == run_status::idle);
  CHECK(ran == 2);
}

TEST_CASE("run_until on an idle scheduler sets the clock", "[scheduler]") {
  // Goal: observers can sample a quiet system at an instant. Method: run_until with no events.
  scheduler s;
  CHECK(s.run_until(7 * ms) == run_status::idle);
  CHECK(s.now_ns() == 7 * ms);
  CHECK_THROWS_AS(s.run_until(1 * ms), admit::assertion_failure);
}

TEST_CASE("executor runs inline inside an event and queues outside one", "[scheduler][executor]") {
  // Goal: blocking.possibly vs blocking.never semantics. Method: execute from inside and outside.
  namespace ex = boost::asio::execution;
  scheduler s;
  sim_executor e = s.get_executor();
  std::vector<std::string> log;
  e.execute([&] { log.push_back("queued-from-outside"); });
  CHECK(log.empty());
  s.post([&] {
    e.execute([&] { log.push_back("inline"); });
    boost::asio::require(e, ex::blocking.never).execute([&] { log.push_back("never"); });
    log.push_back("after");
  });
  s.run();
  CHECK(log == std::vector<std::string>{"queued-from-outside", "inline", "after", "never"});
  CHECK(boost::asio::query(e, ex::blocking) == ex::blocking.possibly);
  CHECK(boost::asio::query(boost::asio::require(e, ex::blocking.never), ex::blocking) ==
        ex::blocking.never);
}

TEST_CASE("large tasks spill to the heap and still run once", "[scheduler]") {
  // Goal: unique_task handles callables above its inline size. Method: capture a big array.
  scheduler s;
  std::array<std::uint64_t, 32> big{};
  big[31] = 7;
  std::uint64_t got = 0;
  s.post([big, &got] { got = big[31]; });
  s.run();
  CHECK(got == 7);
}

TEST_CASE("timers scheduled by posted work before an already peeked timer run first, in order", "[scheduler]") {
  // Goal: a peek that moved the timer queue's floor does not reorder timers scheduled below it.
  // Method: a timer at 100 is peeked while posted work runs; that work schedules 10, 50, 10; many
  // cancellations in between make the queue sweep its dead entries.
  scheduler s;
  std::vector<std::string> log;
  s.schedule_at(100, [&] { log.push_back("100"); });
  s.post([&] {
    std::vector<timer_handle> gone;
    for (int i = 0; i < 500; ++i) gone.push_back(s.schedule_at(60 + i, [&] { log.push_back("cancelled"); }));
    s.schedule_at(10, [&] { log.push_back("10a"); });
    s.schedule_at(50, [&] { log.push_back("50"); });
    s.schedule_at(10, [&] { log.push_back("10b"); });
    for (const timer_handle h : gone) CHECK(s.cancel(h));
  });
  s.post([&] { log.push_back("post"); });
  CHECK(s.run() == run_status::idle);
  CHECK(log == std::vector<std::string>{"post", "10a", "10b", "50", "100"});
  CHECK(s.pending() == 0);
}

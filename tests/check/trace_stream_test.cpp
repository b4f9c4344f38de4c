// The trace ring's stream (sim/check/trace_ring.hpp): every entry offered
// reaches the stream, once, in order and filled, whatever the ring keeps, and
// the stream changes nothing the ring keeps or counts; the monitor hands the
// last entry on at teardown and nothing after it.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <array>
#include <cstddef>
#include <deque>
#include <sstream>
#include <string>
#include <vector>

#include "sim/check/monitor.hpp"
#include "sim/check/trace_ring.hpp"
#include "sim/kernel/scheduler.hpp"

using namespace admit;

namespace {

// What a stream received, in order.
struct received {
  std::vector<int> values;
  static void take(void* self, const int& v) noexcept { static_cast<received*>(self)->values.push_back(v); }
  check::trace_stream<int> stream() { return {&take, this}; }
};

std::vector<int> kept(const check::trace_ring<int>& ring) {
  std::vector<int> out;
  ring.for_each([&](int v) { out.push_back(v); });
  return out;
}

// One step of a run's tracing: offer `value`, or freeze the ring (the first violation).
struct step {
  bool freeze = false;
  int value = 0;
};

// The rings under test: the real one, and a broken one that hands an entry to
// the stream when its slot is asked for, before the caller has filled it (the
// obvious way to stream from next(), and wrong). The broken one stays as a
// guard that the property below can still fail.
struct real_ring {
  check::trace_ring<int> ring;
  explicit real_ring(std::size_t cap, check::trace_stream<int> s) : ring(cap) { ring.stream_to(s); }
  int* next() { return ring.next(); }
  void flush() { ring.flush(); }
};
struct eager_ring {
  check::trace_ring<int> ring;
  check::trace_stream<int> s;
  int spare = 0;
  explicit eager_ring(std::size_t cap, check::trace_stream<int> st) : ring(cap), s(st) {}
  int* next() {
    int* slot = ring.next();
    if (slot == nullptr) slot = &spare;
    s.take(s.context, *slot);
    return slot;
  }
  void flush() {}
};

// The property: the stream gets every value offered, in order; the ring keeps
// and counts what a ring without a stream keeps and counts.
template <class Ring>
void stream_property() {
  const auto cap = *rc::gen::inRange<std::size_t>(0, 6);
  const auto steps = *rc::gen::container<std::vector<step>>(rc::gen::build<step>(
      rc::gen::set(&step::freeze, rc::gen::weightedElement<bool>({{1, true}, {12, false}})),
      rc::gen::set(&step::value, rc::gen::inRange(1, 1000))));
  received got;
  Ring streamed(cap, got.stream());
  check::trace_ring<int> plain(cap);
  std::deque<int> model;  // every value offered
  for (const step& s : steps) {
    if (s.freeze) {
      streamed.ring.freeze();
      plain.freeze();
      continue;
    }
    int* slot = streamed.next();
    RC_ASSERT(slot != nullptr);  // a streamed entry always has a slot
    *slot = s.value;
    if (int* p = plain.next()) *p = s.value;
    model.push_back(s.value);
  }
  streamed.flush();
  RC_ASSERT(got.values == std::vector<int>(model.begin(), model.end()));
  RC_ASSERT(kept(streamed.ring) == kept(plain));
  RC_ASSERT(streamed.ring.total() == plain.total());
  RC_ASSERT(streamed.ring.dropped() == plain.dropped());
}

rc::detail::TestParams fixed_params() {
  rc::detail::TestParams params;
  params.seed = 0x7EACE'0001ull;
  params.maxSuccess = 300;
  params.maxSize = 200;
  return params;
}

// The broken variant's failure is expected: keep RapidCheck from reporting it.
class quiet_listener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

template <class Ring>
rc::detail::TestResult check_property(bool quiet) {
  rc::detail::TestMetadata metadata{"trace stream", "trace stream vs std::deque"};
  if (!quiet) return rc::detail::checkTestable(&stream_property<Ring>, metadata, fixed_params());
  quiet_listener listener;
  return rc::detail::checkProperty(rc::detail::toProperty(&stream_property<Ring>), metadata, fixed_params(), listener);
}

constexpr std::array<const char*, 2> two_invariants = {"gate_inflight_le_cap", "liveness"};
constexpr std::uint8_t one_probe = admit::probe::in_fifo;

}  // namespace

TEST_CASE("a streamed ring hands on every entry, filled and in order, and keeps what it kept", "[check][trace]") {
  // Goal: the stream is the whole run, the ring unchanged. Method: capacity 3, five entries, a freeze, two more.
  received got;
  check::trace_ring<int> ring(3);
  ring.stream_to(got.stream());
  for (int i = 1; i <= 5; ++i) *ring.next() = i;
  CHECK(got.values == std::vector<int>{1, 2, 3, 4});  // the fifth is handed on at the next entry, or at flush
  ring.freeze();
  for (int i = 6; i <= 7; ++i) {
    int* slot = ring.next();
    REQUIRE(slot != nullptr);  // frozen, but streamed: the spare slot
    *slot = i;
  }
  ring.flush();
  ring.flush();  // nothing waits: no entry twice
  CHECK(got.values == std::vector<int>{1, 2, 3, 4, 5, 6, 7});
  CHECK(kept(ring) == std::vector<int>{3, 4, 5});
  CHECK(ring.total() == 7);
  CHECK(ring.dropped() == 2);
}

TEST_CASE("a streamed ring of capacity 0 keeps nothing and streams everything", "[check][trace]") {
  // Goal: explore's runs keep no trace, yet --order's trace is whole. Method: capacity 0, three entries.
  received got;
  check::trace_ring<int> ring(0);
  ring.stream_to(got.stream());
  for (int i = 1; i <= 3; ++i) *ring.next() = i * 10;
  ring.flush();
  CHECK(got.values == std::vector<int>{10, 20, 30});
  CHECK(kept(ring).empty());
  CHECK(ring.total() == 3);
}

TEST_CASE("the stream gets every entry offered; the ring keeps what it would without one", "[check][trace][property]") {
  // Goal: streaming is invisible to the ring and loses nothing. Method: random entries and freezes, against a std::deque.
  const auto result = check_property<real_ring>(false);
  std::ostringstream out;
  rc::detail::printResultMessage(result, out);
  INFO(out.str());
  REQUIRE(result.is<rc::detail::SuccessResult>());
}

TEST_CASE("a ring that streams a slot before it is filled fails the property", "[check][trace][property][mutation]") {
  // Goal: the property can fail. Method: the eager ring hands on each slot as it gives it out.
  CHECK(check_property<eager_ring>(true).is<rc::detail::FailureResult>());
}

TEST_CASE("the monitor streams past the first violation and hands on the last entry at teardown", "[check][trace]") {
  // Goal: a trace file has the whole run, not the ring's part. Method: two entries, a violation, one more, teardown.
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {}, one_probe, 8);
  received got;
  mon.stream_trace(got.stream());
  *mon.trace() = 1;
  *mon.trace() = 2;
  mon.check(0, false, [] { return std::string("broke"); });
  int* after = mon.trace();
  REQUIRE(after != nullptr);  // the ring is frozen; the stream goes on
  *after = 3;
  CHECK(got.values == std::vector<int>{1, 2});
  mon.tear_down();
  CHECK(got.values == std::vector<int>{1, 2, 3});
  CHECK(mon.trace() == nullptr);  // torn down: nothing is traced
  mon.tear_down();
  CHECK(got.values == std::vector<int>{1, 2, 3});
  std::vector<int> ring;
  mon.trace_entries().for_each([&](int v) { ring.push_back(v); });
  CHECK(ring == std::vector<int>{1, 2});  // what the report shows: up to the first violation
}

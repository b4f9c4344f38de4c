// arrivals: every request of a scenario, explicit or generated, as one lazy
// stream in time order.
//
// Model. A scenario's workload holds explicit requests (each written out) and
// arrivals generators (a kind, a count, a start, and the kind's spacing). The
// source merges them into one stream, ordered by arrival time; at equal
// times explicit requests come first, in file order, then generators in file
// order, and each generator's own requests in sequence order. It keeps one
// small state per generator and yields a request only when asked, so a
// generator of 100'000'000 requests costs the same memory as one of 10.
//
// Times. Generator g's request k (k from 0) arrives at t_k:
//   constant        t_k = start + k * every
//   poisson         t_0 = start + x_0, t_k = t_{k-1} + x_k, x_k exponential
//                   with mean mean_gap (sim::exponential_ns), one draw each
//   ramp            t_0 = start, t_{k+1} = t_k + gap_k with n = count - 1 gaps
//                   gap_k = gap_from + trunc((gap_to - gap_from) * k / (n - 1))
//                   (n = 1: gap_0 = gap_from), so the first gap is gap_from
//                   and the last gap_to
//   deadline_surge  t_0 = start, t_{k+1} = t_k + gap_k, R = deadline - start,
//                   r_k = clamp(deadline - t_k, 0, R)
//                   gap_k = gap_near + trunc((gap_far - gap_near) * r_k / R)
//                   so the gap shrinks linearly with the time left, from
//                   gap_far at start to gap_near at the deadline (the rate
//                   1/gap climbs toward the deadline); past the deadline
//                   every gap is gap_near
// All of it is integer arithmetic (128-bit intermediates), with truncation
// toward zero, except the exponential draw, which is the kernel's portable
// one. Times never pass scenario::arrival_time_limit_ns: the loader rejects
// generators that would, and a Poisson stream is clamped there.
//
// Randomness. Generator g draws from sub-streams of the run seed, one per
// purpose, so that changing one parameter never shifts the numbers another
// sees: "arrivals/<g>" for Poisson gaps, "arrivals/<g>/service" for the
// generator's own service distribution, "arrivals/<g>/fail" for fail_ppm
// (one bernoulli_ppm draw per request, only when fail_ppm > 0). Each stream
// is drawn in request order, so the order of draws across streams does not
// matter.
//
// Per-request parameters. A generated request takes its service time from
// the generator's `service` (drawn here) or leaves service_ns empty (the
// world draws from service.service_time); client_timeout from the generator
// or empty; cancel_at = at + cancel_after when cancel_after is given. An
// explicit request carries its own fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::world {

using sim::vtime_ns;

struct arrival {
  static constexpr std::size_t explicit_request = static_cast<std::size_t>(-1);

  vtime_ns at_ns = 0;
  std::size_t gate_index = 0;                     // into scenario::gates
  const scenario::request_spec* spec = nullptr;   // the explicit request, or nullptr when generated
  std::size_t generator = explicit_request;       // index into scenario::arrivals
  std::uint64_t seq_in_generator = 0;             // from 0; explicit: the request's index in the file
  std::uint64_t number = 0;                       // position in the merged stream, from 0
  std::optional<vtime_ns> service_ns;             // empty: draw from service.service_time
  std::optional<vtime_ns> client_timeout_ns;      // empty: service.client_timeout
  std::optional<vtime_ns> cancel_at_ns;           // the handler is cancelled then
  scenario::failure fail = scenario::failure::none;

  bool generated() const { return spec == nullptr; }
  // The request's id: the explicit id, or "arrivals/<generator>/<seq>".
  std::string id() const;
};

class arrival_source {
 public:
  // Keeps a reference to `sc`, which must outlive the source.
  arrival_source(const scenario::scenario& sc, std::uint64_t seed);

  // The next arrival in stream order, or nullopt once all have been given.
  std::optional<arrival> next();

  // How many arrivals the stream holds in all, and how many it has given.
  std::uint64_t total() const { return total_; }
  std::uint64_t emitted() const { return emitted_; }
  bool exhausted() const { return emitted_ == total_; }

 private:
  struct generator_state {
    const scenario::arrival_spec* spec;
    std::uint64_t seq;    // the next request to give
    vtime_ns next_at_ns;  // its arrival time
    sim::prng gap_rng;
    sim::prng service_rng;
    sim::prng fail_rng;
  };
  // A source of the merge: 0 the explicit requests, 1 + g generator g.
  struct head {
    vtime_ns at_ns;
    std::size_t source;
  };

  void push(head h);
  head pop();
  vtime_ns gap_after(generator_state& g);  // the gap from request g.seq to the next

  const scenario::scenario& sc_;
  std::vector<std::size_t> explicit_order_;  // explicit requests by (at, file order)
  std::size_t explicit_next_ = 0;
  std::vector<generator_state> gens_;
  std::vector<head> heap_;  // min-heap on (at_ns, source); at most one entry per source
  std::uint64_t total_ = 0;
  std::uint64_t emitted_ = 0;
};

// arrival_pump: feeds a world the arrivals of a source, in time order, with
// one arrival scheduled at a time.
//
// Only the next arrival is ever pending: it waits in the pump, and its task
// refers to the pump alone (small enough to need no allocation), so a
// stream of any length costs one scheduler entry. When it falls due the pump
// first schedules the one after it, then calls the world with it: the
// world's own scheduling for that arrival comes after the next arrival's.
// A template on its sink, so that the call into the world is a direct one
// the compiler can inline (one per arrival).
template <class Sink>
class arrival_pump {
 public:
  // `sink.on_arrival(const arrival&)` is called for each arrival, at its time.
  arrival_pump(sim::scheduler& sched, arrival_source& src, Sink& sink) noexcept
      : sched_(sched), src_(src), sink_(sink) {}
  arrival_pump(const arrival_pump&) = delete;
  arrival_pump& operator=(const arrival_pump&) = delete;

  // Schedules the first arrival, if any.
  void start() {
    ADMIT_ASSERT(!pending_, "a pump starts once");
    ADMIT_ASSERT(src_.emitted() == 0, "a pump starts before any arrival");
    schedule_next();
  }
  // Whether an arrival is scheduled (false once the last one has been given).
  bool pending() const noexcept { return pending_; }

 private:
  // Inline: they run once per arrival, inside the scheduler's task.
  void schedule_next() {
    std::optional<arrival> a = src_.next();
    pending_ = a.has_value();
    if (!pending_) return;
    ADMIT_ASSERT(a->at_ns >= sched_.now_ns(), "arrivals come in time order");
    slots_[next_] = std::move(*a);
    sched_.schedule_at(slots_[next_].at_ns, [this] { fire(); });
  }
  void fire() {
    const arrival& due = slots_[next_];
    ADMIT_ASSERT(pending_, "only a scheduled arrival falls due");
    ADMIT_ASSERT(sched_.now_ns() == due.at_ns, "an arrival falls due at its time");
    // The next one goes to the other slot, so the one due is not copied.
    next_ ^= 1;
    schedule_next();
    sink_.on_arrival(due);
  }

  sim::scheduler& sched_;
  arrival_source& src_;
  Sink& sink_;
  arrival slots_[2];
  std::size_t next_ = 0;  // the slot of the arrival scheduled next
  bool pending_ = false;
};

}  // namespace admit::world

#include "sim/world/arrivals.hpp"

#include <algorithm>

#include "gate/admit_assert.hpp"
#include "sim/kernel/distribution.hpp"

namespace admit::world {

namespace {

__extension__ typedef __int128 i128;  // exact products of gaps and counts; -Wpedantic wants the marker

// Orders the heap so that its front is the smallest (at_ns, source).
template <class Head>
bool later(const Head& a, const Head& b) {
  return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.source > b.source;
}

vtime_ns clamp_time(i128 t) {
  return t > scenario::arrival_time_limit_ns ? scenario::arrival_time_limit_ns : static_cast<vtime_ns>(t);
}

}  // namespace

std::string arrival::id() const {
  return spec != nullptr ? spec->id : scenario::generated_request_id(generator, seq_in_generator);
}

arrival_source::arrival_source(const scenario::scenario& sc, std::uint64_t seed) : sc_(sc) {
  explicit_order_.resize(sc.requests.size());
  for (std::size_t i = 0; i < explicit_order_.size(); ++i) explicit_order_[i] = i;
  std::stable_sort(explicit_order_.begin(), explicit_order_.end(),
                   [&](std::size_t a, std::size_t b) { return sc.requests[a].at_ns < sc.requests[b].at_ns; });
  total_ = sc.requests.size();
  if (!explicit_order_.empty()) push(head{sc.requests[explicit_order_[0]].at_ns, 0});

  gens_.reserve(sc.arrivals.size());
  for (std::size_t g = 0; g < sc.arrivals.size(); ++g) {
    const scenario::arrival_spec& a = sc.arrivals[g];
    ADMIT_ASSERT(a.count >= 1, "an arrivals generator gives at least one request (the loader checks)");
    const std::string stream = "arrivals/" + std::to_string(g);
    gens_.push_back(generator_state{&a, 0, a.start_ns, sim::substream(seed, stream),
                                    sim::substream(seed, stream + "/service"), sim::substream(seed, stream + "/fail")});
    generator_state& st = gens_.back();
    if (a.kind == scenario::arrival_kind::poisson)
      st.next_at_ns = clamp_time(static_cast<i128>(a.start_ns) + sim::exponential_ns(st.gap_rng, a.mean_gap_ns));
    total_ += static_cast<std::uint64_t>(a.count);
    push(head{st.next_at_ns, g + 1});
  }
}

void arrival_source::push(head h) {
  heap_.push_back(h);
  std::push_heap(heap_.begin(), heap_.end(), later<head>);
}

arrival_source::head arrival_source::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), later<head>);
  const head h = heap_.back();
  heap_.pop_back();
  return h;
}

vtime_ns arrival_source::gap_after(generator_state& g) {
  const scenario::arrival_spec& a = *g.spec;
  const i128 k = static_cast<i128>(g.seq);
  switch (a.kind) {
    case scenario::arrival_kind::constant:
      return a.every_ns;
    case scenario::arrival_kind::poisson:
      return sim::exponential_ns(g.gap_rng, a.mean_gap_ns);
    case scenario::arrival_kind::ramp: {
      const i128 gaps = a.count - 1;
      if (gaps < 2) return a.gap_from_ns;
      const i128 d = static_cast<i128>(a.gap_to_ns) - a.gap_from_ns;
      return static_cast<vtime_ns>(a.gap_from_ns + d * k / (gaps - 1));  // i128 division truncates toward zero
    }
    case scenario::arrival_kind::deadline_surge: {
      const i128 span = static_cast<i128>(a.deadline_ns) - a.start_ns;
      ADMIT_ASSERT(span > 0, "a surge's deadline lies after its start (the loader checks)");
      const i128 left = std::clamp<i128>(static_cast<i128>(a.deadline_ns) - g.next_at_ns, 0, span);
      const i128 spread = static_cast<i128>(a.gap_far_ns) - a.gap_near_ns;
      return static_cast<vtime_ns>(a.gap_near_ns + spread * left / span);
    }
  }
  ADMIT_ASSERT(false, "unknown arrival kind");
  return 0;
}

std::optional<arrival> arrival_source::next() {
  if (heap_.empty()) {
    ADMIT_ASSERT(emitted_ == total_, "the merge ran dry before every arrival was given");
    return std::nullopt;
  }
  const head h = pop();
  arrival out;
  out.at_ns = h.at_ns;
  out.number = emitted_++;
  if (h.source == 0) {
    const std::size_t i = explicit_order_[explicit_next_++];
    const scenario::request_spec& r = sc_.requests[i];
    out.gate_index = r.gate_index;
    out.spec = &r;
    out.seq_in_generator = i;
    out.service_ns = r.service_ns;
    out.client_timeout_ns = r.client_timeout_ns;
    out.cancel_at_ns = r.cancel_at_ns;
    out.fail = r.fail;
    if (explicit_next_ < explicit_order_.size()) push(head{sc_.requests[explicit_order_[explicit_next_]].at_ns, 0});
  } else {
    generator_state& g = gens_[h.source - 1];
    const scenario::arrival_spec& a = *g.spec;
    ADMIT_ASSERT(g.next_at_ns == h.at_ns, "a generator's head in the merge matches its state");
    out.gate_index = a.gate_index;
    out.generator = h.source - 1;
    out.seq_in_generator = g.seq;
    if (a.service) out.service_ns = a.service->sample(g.service_rng);
    out.client_timeout_ns = a.client_timeout_ns;
    if (a.cancel_after_ns) out.cancel_at_ns = h.at_ns + *a.cancel_after_ns;
    if (a.fail_ppm > 0 && g.fail_rng.bernoulli_ppm(static_cast<std::uint32_t>(a.fail_ppm)))
      out.fail = scenario::failure::constructor;
    if (g.seq + 1 < static_cast<std::uint64_t>(a.count)) {
      const vtime_ns gap = gap_after(g);
      ADMIT_ASSERT(gap >= 0, "a gap is never negative");
      g.next_at_ns = clamp_time(static_cast<i128>(g.next_at_ns) + gap);
      ++g.seq;
      push(head{g.next_at_ns, h.source});
    } else {
      ++g.seq;
    }
  }
  return out;
}

}  // namespace admit::world

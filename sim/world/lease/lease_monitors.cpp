#include "sim/world/lease/lease_monitors.hpp"

#include <algorithm>
#include <cstring>

#include "gate/admit_assert.hpp"
#include "sim/check/causes.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/world/cause_text.hpp"

namespace admit::world::lease {

lease_monitors::lease_monitors(sim::scheduler& sched, const scenario::scenario& sc, std::size_t trace_capacity,
                               run_metrics& metrics, lease_metrics& lease)
    : mon_(sched, lease_invariant_names, sc.checks.invariants, probe::in_lease, trace_capacity,
           sc.checks.stop_at_first),
      sched_(sched),
      metrics_(metrics), lease_(lease), limit_(sc.gates.front().lease.limit),
      lease_ns_(sc.gates.front().lease.lease_ns) {
  ADMIT_ASSERT(limit_ >= 1, "a lease gate's limit is at least 1 (the loader refuses 0)");
  ADMIT_ASSERT(lease_ns_ > 0, "a lease gate's lease is positive (the loader refuses 0)");
}

std::string lease_monitors::recent_calls() const {
  constexpr std::size_t shown = 4;
  std::array<const pending_trace*, shown> last{};
  std::size_t n = 0;
  mon_.trace_entries().for_each([&](const pending_trace& e) {
    const std::string_view source(e.source);
    if (source != "redis" && source != "fault") return;
    if (n == shown) {
      std::move(last.begin() + 1, last.end(), last.begin());
      --n;
    }
    last[n++] = &e;
  });
  if (n == 0) return {};
  std::string s = "; the last calls and faults the run traced";
  if (mon_.trace_entries().frozen()) s += " up to its first violation";
  s += ": ";
  for (std::size_t i = 0; i < n; ++i) {
    ADMIT_ASSERT(last[i] != nullptr, "every slot below n holds an entry");
    if (i != 0) s += "; ";
    s += last[i]->text() + " at " + span_text(last[i]->at_ns);
  }
  return s;
}

std::string lease_monitors::pending_trace::text() const {
  std::string t;
  append_text(t);
  return t;
}

void lease_monitors::pending_trace::append_text(std::string& out) const {
  out += head;
  out += word;
  if (mid) out += mid;
  if (has_number) out += std::to_string(number);
  if (tail) out += tail;
}

void lease_monitors::stream_trace(check::trace_sink& sink) {
  sink_ = &sink;
  line_text_.reserve(256);
  mon_.stream_trace(check::trace_stream<pending_trace>{&stream_entry, this});
}

void lease_monitors::stream_entry(void* self, const pending_trace& e) noexcept {
  auto& m = *static_cast<lease_monitors*>(self);
  try {
    m.line_text_.clear();
    e.append_text(m.line_text_);
  } catch (...) {  // only bad_alloc: the text could not be made
    m.sink_->lost("out of memory while making a trace entry's text");
    return;
  }
  m.sink_->entry(check::trace_line{e.at_ns, e.source, m.line_text_, e.count, 0, e.ref});
}

void lease_monitors::fill(pending_trace& e, const char* source, const trace_text& text, std::int64_t count,
                          std::uint64_t ref) {
  // A reused slot still holds the entry it kept: every field is written.
  e.at_ns = sched_.now_ns();
  e.source = source;
  e.head = text.head_;
  e.word.assign(text.word_);
  e.mid = text.mid_;
  e.has_number = text.has_number_;
  e.number = text.number_;
  e.tail = text.tail_;
  e.count = count;
  e.ref = ref;
}

// --- the network and the Redis side ---------------------------------------------

void lease_monitors::on(const fact::call_sent&) { ++lease_.redis_calls; }

void lease_monitors::on(const fact::call_failed&) { ++lease_.redis_errors; }

void lease_monitors::on(const fact::reply_lost&) { ADMIT_PROBE(lease_lost_reply); }

void lease_monitors::on(const fact::permit_taken& f) {
  ++lease_.leases_reaped_live;
  ADMIT_PROBE(lease_reaped_live);
  trace("redis",
        trace_text(f.with_key ? "lease expired with its key " : "reaped live lease ")
            .word(f.member)
            .number(static_cast<std::int64_t>(f.holder), " (worker ", ")"),
        0, static_cast<std::uint64_t>(f.holder));
}

void lease_monitors::on(const fact::script_ran& f) {
  lease_.set_members_max = std::max(lease_.set_members_max, f.members);
  metrics_.gate_inflight_max = std::max(metrics_.gate_inflight_max, f.members);
  const char* what = f.op == redis::script_op::acquire   ? "acquire "
                     : f.op == redis::script_op::release ? "release "
                                                         : "renew ";
  if (f.reply.ok()) [[likely]] {
    trace("redis", trace_text(what).word(f.token).number(f.reply.value, " -> "), f.members, f.worker);
  } else {
    // An error reply is no number: it reads as the error. NOSCRIPT is the one a script's call
    // survives (any other ends the run as the script's failure): the client sends the script's
    // body by EVAL next, which the following entry of the token shows.
    const bool noscript = f.reply.error.starts_with("NOSCRIPT");
    const std::string text = f.token + " -> error " + f.reply.error +
                             (noscript ? " (EVALSHA of a script the server's cache lost: the client resends it by EVAL)" : "");
    trace("redis", trace_text(what).word(text), f.members, f.worker);
  }
  if (f.op == redis::script_op::acquire && f.reply.ok() && !f.reply.granted()) ADMIT_PROBE(lease_refused_at_limit);
  if (f.op == redis::script_op::acquire && f.reply.granted() && f.was_member) [[unlikely]] {
    // A retried acquire granted again: the member takes no second permit, so nothing is harmed (an
    // overshoot would be gate_inflight_le_cap's); the report counts it and says what became of the first.
    ADMIT_PROBE(lease_regranted);
    ++lease_.regrants;
    if (lease_.regrant_example.empty() && causes_ != nullptr) lease_.regrant_example = causes_->regrant(f.worker, f.token);
  }
}

void lease_monitors::on(const fact::split_add& f) {
  metrics_.gate_inflight_max = std::max(metrics_.gate_inflight_max, f.members);
}

void lease_monitors::on(const fact::script_failed& f) {
  trace("redis", trace_text("script error in ").word(f.operation), 0, f.worker);
}

void lease_monitors::on(const fact::reply_inconsistent& f) {
  trace("redis", trace_text("inconsistent reply for ").word(f.token), 0, f.worker);
}

// --- the portal -------------------------------------------------------------------

void lease_monitors::portal_counts(const fact::portal_counts& at) {
  metrics_.portal_inflight_max = std::max(metrics_.portal_inflight_max, at.open);
  lease_.portal_attempted_max = std::max(lease_.portal_attempted_max, at.attempted);
}

void lease_monitors::on(const fact::portal_refused& f) {
  portal_counts(f.at);
  ++lease_.portal_429;
  ADMIT_PROBE(lease_portal_429);
  trace("portal", trace_text("429 for item ").number(static_cast<std::int64_t>(f.number)), f.at.open, f.at.worker);
}

void lease_monitors::on(const fact::portal_opened& f) {
  portal_counts(f.at);
  trace("portal", trace_text("open item ").number(static_cast<std::int64_t>(f.number)), f.at.open, f.at.worker);
}

void lease_monitors::on(const fact::portal_closed& f) {
  trace("portal", trace_text("close item ").number(static_cast<std::int64_t>(f.number)), f.at.open, f.at.worker);
}

void lease_monitors::on(const fact::client_left& f) {
  const auto number = static_cast<std::int64_t>(f.number);
  if (!f.read_timeout) {
    trace("worker", trace_text("gave up item ").number(number), f.open, f.worker);
    return;
  }
  ++metrics_.client_timeouts;
  ADMIT_PROBE(lease_client_read_timeout);
  trace("worker", trace_text("ReadTimeout item ").number(number), f.open, f.worker);
}

// --- the workers and their items ---------------------------------------------------

void lease_monitors::on(const fact::acquiring& f) {
  trace("worker", trace_text("acquire ").word(f.token), f.holders, f.worker);
}

void lease_monitors::on(const fact::sent_without_permit& f) {
  trace("worker", trace_text("fail-open ").word(f.token), f.holders, f.worker);
}

void lease_monitors::on(const fact::gave_up& f) {
  const std::string why(f.why);
  if (f.requeued) {
    ++lease_.items_requeued;
    ++lease_.workers_exited;
    trace("worker", trace_text().word("requeued " + f.token + " and exited (" + why + ")"), f.holders, f.worker);
    return;
  }
  f.unreachable ? ADMIT_PROBE(lease_deferred_unreachable) : ADMIT_PROBE(lease_deferred);
  ++lease_.deferred;
  trace("worker", trace_text().word("deferred " + f.token + " (" + why + ")"), f.holders, f.worker);
}

void lease_monitors::on(const fact::granted& f) {
  metrics_.wait_ns.add(f.waited_ns);
  if (f.attempts > 1) ADMIT_PROBE(lease_granted_after_backoff);
  lease_.holders_max = std::max(lease_.holders_max, f.holders);
  trace("worker", trace_text("holds ").word(f.token), f.holders, f.worker);
}

void lease_monitors::on(const fact::served& f) { metrics_.service_ns.add(f.service_ns); }

void lease_monitors::on(const fact::release_failed&) {
  ++lease_.failed_releases;
  ADMIT_PROBE(lease_failed_release);
}

void lease_monitors::on(const fact::renewal_lost& f) {
  ++lease_.renewals_lost;
  ADMIT_PROBE(lease_renewal_lost);
  trace("worker", trace_text("renewal lost ").word(f.token), f.holders, f.worker);
}

void lease_monitors::on(const fact::worker_crashed& f) {
  if (f.held) ADMIT_PROBE(lease_crash_while_holding);
}

void lease_monitors::on(const fact::item_queued& f) {
  if (!f.requeued) ++metrics_.requests;
}

void lease_monitors::on(const fact::item_ended& f) {
  if (std::strcmp(f.how, "completed") == 0)
    ++metrics_.completed;
  else
    ++metrics_.refused[f.how];
}

void lease_monitors::on(const fact::fault_began& f) {
  ++faults_injected_[static_cast<std::size_t>(f.spec.kind)];
  trace("fault", trace_text().word(f.what), 0, 0);
}

void lease_monitors::write(run_record& rec) {
  rec.invariants = mon_.take_invariants();
  rec.probes = mon_.probes();
  const auto& ring = mon_.trace_entries();
  rec.trace.clear();
  rec.trace.reserve(ring.size());
  ring.for_each([&](const pending_trace& e) {
    rec.trace.push_back(trace_entry{e.at_ns, e.source, e.text(), e.count, 0, e.ref});
  });
  rec.trace_dropped = ring.dropped();
  rec.faults_injected = faults_injected_;
}

}  // namespace admit::world::lease

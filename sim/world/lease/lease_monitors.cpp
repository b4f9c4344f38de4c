#include "sim/world/lease/lease_monitors.hpp"

#include <algorithm>

#include "sim/check/causes.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::world::lease {

lease_monitors::lease_monitors(sim::scheduler& sched, const scenario::scenario& sc, std::size_t trace_capacity,
                               run_metrics& metrics, lease_metrics& lease)
    : mon_(sched, lease_invariant_names, sc.checks.invariants, lease_probe_names, trace_capacity,
           sc.checks.stop_at_first),
      sched_(sched),
      metrics_(metrics), lease_(lease), limit_(sc.gates.front().lease.limit) {}

template <class Ask>
std::vector<check::cause> lease_monitors::causes_of(Ask&& ask) {
  std::vector<check::cause> out;
  if (causes_ == nullptr) return out;  // a part tested alone
  ask(*causes_, out);
  if (out.empty()) out.push_back(check::cause{check::cause_kind("unexplained"), "the world recorded no cause"});
  return out;
}

void lease_monitors::refusal(refusal_snapshot& out) {
  // Emptied first: the attempt being refused is among those the finder reads.
  out.uncovered.clear();
  out.covered = 0;
  if (causes_ != nullptr) causes_->refusal(out);
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

void lease_monitors::reaped_live(std::string_view member, std::size_t holder) {
  ++lease_.leases_reaped_live;
  hit(lp_reaped_live);
  trace("redis",
        trace_text("reaped live lease ").word(member).number(static_cast<std::int64_t>(holder), " (worker ", ")"),
        0, static_cast<std::uint64_t>(holder));
}

void lease_monitors::expired_live(std::string_view member, std::size_t holder) {
  ++lease_.leases_reaped_live;
  hit(lp_reaped_live);
  trace("redis",
        trace_text("lease expired with its key ").word(member).number(static_cast<std::int64_t>(holder), " (worker ", ")"),
        0, static_cast<std::uint64_t>(holder));
}

void lease_monitors::after_acquire_reaping(std::size_t wi, const std::string* survivor) {
  mon_.check(l_expiry, survivor == nullptr, [&] {
    return check::finding{"permit " + *survivor + " outlived its lease and was not reaped by an acquire",
                          causes_of([&](cause_finder& f, auto& out) { f.survivor(out, wi, *survivor); })};
  });
}

void lease_monitors::check_gate(std::size_t wi, redis::script_op op, const std::string& token, std::int64_t members,
                                bool split_add) {
  mon_.level(l_gate_inflight, members, limit_, [&] {
    return check::finding{"the gate key holds " + std::to_string(members) + " live members, above the limit " +
                              std::to_string(limit_) + (split_add ? " (a non-atomic check-then-add)" : ""),
                          causes_of([&](cause_finder& f, auto& out) { f.gate(out, wi, op, token, members, split_add); })};
  });
}

void lease_monitors::script_ran(std::size_t wi, redis::script_op op, const std::string& token,
                                const redis::script_reply& reply, std::int64_t members, bool was_member) {
  const char* what = op == redis::script_op::acquire   ? "acquire "
                     : op == redis::script_op::release ? "release "
                                                       : "renew ";
  if (reply.ok()) [[likely]] {
    trace("redis", trace_text(what).word(token).number(reply.value, " -> "), members, wi);
  } else {
    // An error reply is no number: it reads as the error. NOSCRIPT is the one a script's call
    // survives (any other ends the run as the script's failure): the client sends the script's
    // body by EVAL next, which the following entry of the token shows.
    const bool noscript = reply.error.starts_with("NOSCRIPT");
    const std::string text = token + " -> error " + reply.error +
                             (noscript ? " (EVALSHA of a script the server's cache lost: the client resends it by EVAL)" : "");
    trace("redis", trace_text(what).word(text), members, wi);
  }
  check_gate(wi, op, token, members, false);
  if (op == redis::script_op::acquire && reply.ok() && !reply.granted()) hit(lp_refused_at_limit);
  if (op == redis::script_op::acquire && reply.granted())
    mon_.check(l_token_once, !was_member, [&] {
      return check::finding{"token " + token + " was granted while it already held a permit (a retried acquire "
                            "whose first reply was lost)",
                            causes_of([&](cause_finder& f, auto& out) { f.granted_twice(out, wi, token); })};
    });
}

void lease_monitors::members_after_split_add(std::int64_t members) {
  metrics_.gate_inflight_max = std::max(metrics_.gate_inflight_max, members);
}

void lease_monitors::check_split_add(std::size_t wi, const std::string& token, std::int64_t members) {
  check_gate(wi, redis::script_op::acquire, token, members, true);
}

void lease_monitors::deferred(std::size_t wi, const std::string& token, bool unreachable, const std::string& why,
                              std::int64_t holders) {
  hit(unreachable ? lp_deferred_unreachable : lp_deferred);
  ++lease_.deferred;
  trace("worker", trace_text().word("deferred " + token + " (" + why + ")"), holders, wi);
}

void lease_monitors::requeued_and_exited(std::size_t wi, const std::string& token, const std::string& why,
                                         std::int64_t holders) {
  ++lease_.items_requeued;
  ++lease_.workers_exited;
  trace("worker", trace_text().word("requeued " + token + " and exited (" + why + ")"), holders, wi);
}

void lease_monitors::release_failed() {
  ++lease_.failed_releases;
  hit(lp_failed_release);
}

void lease_monitors::renewal_lost(std::size_t wi, const std::string& token, std::int64_t holders) {
  ++lease_.renewals_lost;
  hit(lp_renewal_lost);
  trace("worker", trace_text("renewal lost ").word(token), holders, wi);
}

check::finding lease_monitors::portal_violation(std::size_t wi, std::int64_t attempted, std::int64_t cap,
                                               std::int64_t open, bool refused) {
  check::finding f;
  if (attempted == open)
    f.detail = "worker " + std::to_string(wi) + " made " + std::to_string(open) +
               " connections open at the portal, above its true cap " + std::to_string(cap);
  else
    f.detail = "worker " + std::to_string(wi) + (refused ? " was refused" : " left") + ": " + std::to_string(attempted) +
               " connections asked of the portal (" + std::to_string(open) +
               " open, the rest refused with 429), above its true cap " + std::to_string(cap);
  f.causes = causes_of([&](cause_finder& c, auto& out) { c.portal(out); });
  return f;
}

void lease_monitors::idle_at(vtime_ns lh_ns, std::uint64_t unended, std::int64_t holders) {
  std::string why;
  if (unended != 0) why = std::to_string(unended) + " work items that arrived had not ended";
  else if (holders != 0) why = std::to_string(holders) + " workers still held a permit";
  mon_.check(l_liveness, why.empty(), [&] {
    return check::finding{"at checks.liveness_horizon (" + scenario::format_duration(lh_ns) + ") " + why,
                          causes_of([&](cause_finder& f, auto& out) { f.not_idle(out, lh_ns); })};
  });
}

void lease_monitors::at_end(const std::string& why, end_state state) {
  mon_.check(l_liveness, why.empty(), [&] {
    return check::finding{why, causes_of([&](cause_finder& f, auto& out) {
                            f.not_live(out, state == end_state::items_unended);
                          })};
  });
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
}

}  // namespace admit::world::lease

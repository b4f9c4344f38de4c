#include "sim/world/lease/lease_monitors.hpp"

#include <algorithm>

#include "gate/admit_assert.hpp"
#include "sim/check/causes.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/world/cause_text.hpp"

namespace admit::world::lease {

lease_monitors::lease_monitors(sim::scheduler& sched, const scenario::scenario& sc, std::size_t trace_capacity,
                               run_metrics& metrics, lease_metrics& lease)
    : mon_(sched, lease_invariant_names, sc.checks.invariants, lease_probe_names, trace_capacity,
           sc.checks.stop_at_first),
      sched_(sched),
      metrics_(metrics), lease_(lease), limit_(sc.gates.front().lease.limit),
      progress_bound_ns_(4 * sc.gates.front().lease.lease_ns) {
  ADMIT_ASSERT(limit_ >= 1, "a lease gate's limit is at least 1 (the loader refuses 0)");
  ADMIT_ASSERT(progress_bound_ns_ > 0, "a lease gate's lease is positive (the loader refuses 0)");
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
  if (op == redis::script_op::acquire && reply.granted() && was_member) [[unlikely]] {
    // A retried acquire granted again: the member takes no second permit, so nothing is harmed (an
    // overshoot would be gate_inflight_le_cap's); the report counts it and says what became of the first.
    hit(lp_regranted);
    ++lease_.regrants;
    if (lease_.regrant_example.empty() && causes_ != nullptr) lease_.regrant_example = causes_->regrant(wi, token);
  }
}

void lease_monitors::acquire_answered(std::size_t wi, bool granted, std::int64_t live,
                                      const std::function<std::string()>& reply) {
  ADMIT_ASSERT(live >= 0, "a count of live permits");
  const vtime_ns now = sched_.now_ns();
  if (granted) {
    ++grants_;
    starved_since_ns_ = -1;
    return;
  }
  if (holds_ == 0 && grants_ == 0 && refusals_++ == 0) first_refusal_ = reply();
  if (live >= limit_) {
    starved_since_ns_ = -1;  // refused at the limit: the gate is doing its job
    return;
  }
  if (starved_since_ns_ < 0) {
    starved_since_ns_ = now;
    starved_refusals_ = 0;
    starved_live_max_ = 0;
    starved_reported_ = false;
  }
  ++starved_refusals_;
  starved_live_max_ = std::max(starved_live_max_, live);
  ADMIT_ASSERT(now >= starved_since_ns_, "time moves forward");
  if (starved_reported_ || now - starved_since_ns_ <= progress_bound_ns_) return;
  starved_reported_ = true;
  mon_.check(l_liveness, false, [&] {
    const std::string detail =
        "acquires were refused from " + span_text(starved_since_ns_) + " to " + span_text(now) + " (" +
        std::to_string(starved_refusals_) + " refusals, the last worker " + std::to_string(wi) + "'s) while at most " +
        std::to_string(starved_live_max_) + " of the limit " + std::to_string(limit_) +
        " permits were live by the server's clock: longer than the progress bound (" + span_text(progress_bound_ns_) +
        ", four leases)";
    return check::finding{"capacity stayed free while work waited: " + detail,
                          {check::cause{check::cause_kind("refused_with_free_capacity"), detail}}};
  });
}

void lease_monitors::capacity_after(std::size_t wi, const char* op, const std::string& token, std::int64_t free,
                                    std::int64_t held) {
  ADMIT_ASSERT(held >= 0, "a count of holders");
  const std::int64_t off = free + held - limit_;  // < 0: permits lost; > 0: permits beyond the limit
  mon_.level(l_capacity, off < 0 ? -off : off, 0, [&] {
    const std::string sum = std::to_string(free) + " free + " + std::to_string(held) + " held = " +
                            std::to_string(free + held);
    const std::string detail =
        "after worker " + std::to_string(wi) + "'s " + op + " for " + token + " at " + span_text(sched_.now_ns()) +
        ", " + sum + (off < 0 ? ", below" : ", above") + " the limit " + std::to_string(limit_) + ": " +
        (off < 0 ? count_text(-off, "permit", "permits") + " lost for good (no caller can take it, no holder holds it)"
                 : count_text(off, "permit", "permits") + " beyond the limit a caller can take");
    return check::finding{detail, {check::cause{off < 0 ? check::cause_kind("permit_lost") : check::cause_kind("permit_surplus"), detail}}};
  });
}

void lease_monitors::progress_at_end(std::uint64_t arrived) {
  if (arrived == 0 || holds_ != 0) return;
  mon_.check(l_liveness, false, [&] {
    std::string detail = count_text(static_cast<std::int64_t>(arrived), "work item", "work items") +
                         " arrived and no acquire was granted: ";
    detail += refusals_ == 0 ? std::string("no acquire got an answer its rule could read (Redis unreachable, or every reply lost)")
                             : count_text(static_cast<std::int64_t>(refusals_), "reply was", "replies were") +
                                   " read as refusals, the first " + first_refusal_;
    return check::finding{"nothing was granted while work arrived", {check::cause{check::cause_kind("never_granted"), detail}}};
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

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

void lease_monitors::check_gate(std::size_t wi, redis::script_op op, const std::string& token, std::int64_t members,
                                bool split_add) {
  mon_.level(l_gate_inflight, members, limit_, [&] {
    return check::finding{"the gate key holds " + std::to_string(members) + " live members, above the limit " +
                              std::to_string(limit_) + (split_add ? " (a non-atomic check-then-add)" : ""),
                          causes_of([&](cause_finder& f, auto& out) { f.gate(out, wi, op, token, members, split_add); })};
  });
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

// --- the network and the Redis side ---------------------------------------------

void lease_monitors::on(const fact::call_sent&) { ++lease_.redis_calls; }

void lease_monitors::on(const fact::call_failed&) { ++lease_.redis_errors; }

void lease_monitors::on(const fact::reply_lost&) { hit(lp_lost_reply); }

void lease_monitors::on(const fact::permit_taken& f) {
  ++lease_.leases_reaped_live;
  hit(lp_reaped_live);
  trace("redis",
        trace_text(f.with_key ? "lease expired with its key " : "reaped live lease ")
            .word(f.member)
            .number(static_cast<std::int64_t>(f.holder), " (worker ", ")"),
        0, static_cast<std::uint64_t>(f.holder));
}

void lease_monitors::check_expiry(const fact::script_ran& f, std::int64_t& expired) {
  // Every permit past its expiry by the server's clock must be gone after an acquire.
  expired = 0;
  const redis::sorted_set* after = f.holders_after;
  std::size_t first = 0;
  if (after != nullptr) {
    const double stale = static_cast<double>(f.server_now_ms - f.expiry_offset_ms);
    const auto range = after->score_range(redis::score_bound{-1e300, false}, redis::score_bound{stale, true});
    first = range.first;
    expired = static_cast<std::int64_t>(range.second - range.first);
    ADMIT_ASSERT(range.first <= range.second && range.second <= after->size(), "a score range lies in its set");
  }
  const std::string* survivor = expired == 0 ? nullptr : &after->entries()[first].member;
  mon_.check(l_expiry, survivor == nullptr, [&] {
    acquire_now n;
    n.now_ms = f.script_now_ms();
    n.callers = f.script_now_callers;
    n.past_by_it = after->entries()[first].score <= static_cast<double>(n.now_ms - f.expiry_offset_ms);
    return check::finding{"permit " + *survivor + " outlived its lease and was not reaped by an acquire",
                          causes_of([&](cause_finder& c, auto& out) { c.survivor(out, f.worker, *survivor, n); })};
  });
}

void lease_monitors::acquire_answered(const fact::script_ran& f, std::int64_t live) {
  // The progress rule of liveness: a run in which work arrived and nothing was ever granted is not live,
  // and neither is one whose acquires were refused for longer than progress_bound_ns while fewer than
  // the limit were live by the server's clock.
  ADMIT_ASSERT(live >= 0 && live <= f.members, "the live permits are among the members");
  const vtime_ns now = sched_.now_ns();
  if (f.reply.granted()) {
    ++grants_;
    starved_since_ns_ = -1;
    return;
  }
  if (holds_ == 0 && grants_ == 0 && refusals_++ == 0) first_refusal_ = f.reply_text();
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
        std::to_string(starved_refusals_) + " refusals, the last worker " + std::to_string(f.worker) +
        "'s) while at most " + std::to_string(starved_live_max_) + " of the limit " + std::to_string(limit_) +
        " permits were live by the server's clock: longer than the progress bound (" + span_text(progress_bound_ns_) +
        ", four leases)";
    return check::finding{"capacity stayed free while work waited: " + detail,
                          {check::cause{check::cause_kind("refused_with_free_capacity"), detail}}};
  });
}

void lease_monitors::capacity_after(const fact::script_ran& f) {
  ADMIT_ASSERT(f.free.has_value() && f.held >= 0, "a counter and a count of holders");
  const std::int64_t free = *f.free;
  const std::int64_t held = f.held;
  const std::int64_t off = free + held - limit_;  // < 0: permits lost; > 0: permits beyond the limit
  mon_.level(l_capacity, off < 0 ? -off : off, 0, [&] {
    const char* op = f.op == redis::script_op::acquire ? "acquire" : f.op == redis::script_op::release ? "release" : "renew";
    const std::string sum = std::to_string(free) + " free + " + std::to_string(held) + " held = " +
                            std::to_string(free + held);
    const std::string detail =
        "after worker " + std::to_string(f.worker) + "'s " + op + " for " + f.token + " at " +
        span_text(sched_.now_ns()) + ", " + sum + (off < 0 ? ", below" : ", above") + " the limit " +
        std::to_string(limit_) + ": " +
        (off < 0 ? count_text(-off, "permit", "permits") + " lost for good (no caller can take it, no holder holds it)"
                 : count_text(off, "permit", "permits") + " beyond the limit a caller can take");
    return check::finding{detail, {check::cause{off < 0 ? check::cause_kind("permit_lost") : check::cause_kind("permit_surplus"), detail}}};
  });
}

void lease_monitors::on(const fact::script_ran& f) {
  std::int64_t expired = 0;
  if (f.judged) check_expiry(f, expired);
  if (f.progress) acquire_answered(f, f.members - expired);
  if (f.free) capacity_after(f);
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
  check_gate(f.worker, f.op, f.token, f.members, false);
  if (f.op == redis::script_op::acquire && f.reply.ok() && !f.reply.granted()) hit(lp_refused_at_limit);
  if (f.op == redis::script_op::acquire && f.reply.granted() && f.was_member) [[unlikely]] {
    // A retried acquire granted again: the member takes no second permit, so nothing is harmed (an
    // overshoot would be gate_inflight_le_cap's); the report counts it and says what became of the first.
    hit(lp_regranted);
    ++lease_.regrants;
    if (lease_.regrant_example.empty() && causes_ != nullptr) lease_.regrant_example = causes_->regrant(f.worker, f.token);
  }
}

void lease_monitors::on(const fact::split_add& f) {
  metrics_.gate_inflight_max = std::max(metrics_.gate_inflight_max, f.members);
  check_gate(f.worker, redis::script_op::acquire, f.token, f.members, true);
}

void lease_monitors::on(const fact::script_failed& f) {
  trace("redis", trace_text("script error in ").word(f.operation), 0, f.worker);
}

void lease_monitors::on(const fact::reply_inconsistent& f) {
  trace("redis", trace_text("inconsistent reply for ").word(f.token), 0, f.worker);
}

// --- the portal -------------------------------------------------------------------

void lease_monitors::portal_attempt(const fact::portal_counts& at, bool refused) {
  metrics_.portal_inflight_max = std::max(metrics_.portal_inflight_max, at.open);
  lease_.portal_attempted_max = std::max(lease_.portal_attempted_max, at.attempted);
  mon_.level(l_portal_inflight, at.attempted, at.cap,
             [&] { return portal_violation(at.worker, at.attempted, at.cap, at.open, refused); });
}

void lease_monitors::portal_level(const fact::portal_counts& at) {
  mon_.level(l_portal_inflight, at.attempted, at.cap,
             [&] { return portal_violation(at.worker, at.attempted, at.cap, at.open, false); });
}

void lease_monitors::on(const fact::portal_refused& f) {
  // What fills the portal now, kept without its sentences (made only if a violation asks). Emptied
  // first: the attempt being refused is among those the finder reads.
  f.filled.uncovered.clear();
  f.filled.covered = 0;
  if (causes_ != nullptr) causes_->refusal(f.filled);
  portal_attempt(f.at, true);
  ++lease_.portal_429;
  hit(lp_portal_429);
  trace("portal", trace_text("429 for item ").number(static_cast<std::int64_t>(f.number)), f.at.open, f.at.worker);
}

void lease_monitors::on(const fact::portal_opened& f) {
  portal_attempt(f.at, false);
  trace("portal", trace_text("open item ").number(static_cast<std::int64_t>(f.number)), f.at.open, f.at.worker);
}

void lease_monitors::on(const fact::portal_refusal_over& f) { portal_level(f.at); }

void lease_monitors::on(const fact::portal_closed& f) {
  portal_level(f.at);
  trace("portal", trace_text("close item ").number(static_cast<std::int64_t>(f.number)), f.at.open, f.at.worker);
}

void lease_monitors::on(const fact::client_left& f) {
  const auto number = static_cast<std::int64_t>(f.number);
  if (!f.read_timeout) {
    trace("worker", trace_text("gave up item ").number(number), f.open, f.worker);
    return;
  }
  ++metrics_.client_timeouts;
  hit(lp_client_read_timeout);
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
  hit(f.unreachable ? lp_deferred_unreachable : lp_deferred);
  ++lease_.deferred;
  trace("worker", trace_text().word("deferred " + f.token + " (" + why + ")"), f.holders, f.worker);
}

void lease_monitors::on(const fact::granted& f) {
  metrics_.wait_ns.add(f.waited_ns);
  ++holds_;
  if (f.attempts > 1) hit(lp_granted_after_backoff);
  lease_.holders_max = std::max(lease_.holders_max, f.holders);
  trace("worker", trace_text("holds ").word(f.token), f.holders, f.worker);
}

void lease_monitors::on(const fact::served& f) { metrics_.service_ns.add(f.service_ns); }

void lease_monitors::on(const fact::release_failed&) {
  ++lease_.failed_releases;
  hit(lp_failed_release);
}

void lease_monitors::on(const fact::renewal_lost& f) {
  ++lease_.renewals_lost;
  hit(lp_renewal_lost);
  trace("worker", trace_text("renewal lost ").word(f.token), f.holders, f.worker);
}

void lease_monitors::on(const fact::worker_crashed& f) {
  if (f.held) hit(lp_crash_while_holding);
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

void lease_monitors::on(const fact::fault_began& f) { trace("fault", trace_text().word(f.what), 0, 0); }

// --- liveness at the horizon and at the end ------------------------------------------

void lease_monitors::on(const fact::horizon_reached& f) {
  std::string why;
  if (f.unended != 0) why = std::to_string(f.unended) + " work items that arrived had not ended";
  else if (f.holders != 0) why = std::to_string(f.holders) + " workers still held a permit";
  mon_.check(l_liveness, why.empty(), [&] {
    return check::finding{"at checks.liveness_horizon (" + scenario::format_duration(f.at_ns) + ") " + why,
                          causes_of([&](cause_finder& c, auto& out) { c.not_idle(out, f.at_ns); })};
  });
}

void lease_monitors::not_live(const std::string& why, bool items_unended) {
  mon_.check(l_liveness, why.empty(), [&] {
    return check::finding{why, causes_of([&](cause_finder& c, auto& out) { c.not_live(out, items_unended); })};
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

void lease_monitors::on(const fact::run_ended& f) {
  // Every item ended; then, one lease after the end, every permit released or past its expiry by the
  // server's clock (a permit past its lease that no acquire has reaped yet is free capacity).
  if (f.unended != 0 || f.arrivals_pending)
    not_live(std::to_string(f.unended) + " work items never ended", true);
  else if (f.permits_left != 0)
    not_live(std::to_string(f.permits_left) + " permits still held one lease after the end" + std::string(f.where),
             false);
  else
    not_live(std::string(), false);
  progress_at_end(f.arrived);
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

#include "sim/world/lease/lease_invariants.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "gate/admit_assert.hpp"
#include "sim/check/causes.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/world/cause_text.hpp"

namespace admit::world::lease {

namespace {

// The permits of an acquire's holders past their expiry by the server's clock: [first, last).
std::pair<std::size_t, std::size_t> expired_range(const fact::script_ran& f) {
  ADMIT_ASSERT(f.judged, "only an acquire whose script ran is judged on its holders");
  if (f.holders_after == nullptr) return {0, 0};
  const double stale = static_cast<double>(f.server_now_ms - f.expiry_offset_ms);
  const auto range =
      f.holders_after->score_range(redis::score_bound{-1e300, false}, redis::score_bound{stale, true});
  ADMIT_ASSERT(range.first <= range.second && range.second <= f.holders_after->size(), "a score range lies in its set");
  return range;
}

// gate_inflight_le_cap: the members of the gate key after every script (and after the add of a
// non-atomic check-then-add) against the limit. Every member counts until it is removed, a permit past its
// lease too: the key is the gate's own count (what ZCARD or HLEN answers), and a design that leaves expired
// permits in it and admits beside them holds more than the limit by its own key.
class gate_inflight final : public fact_sink {
 public:
  explicit gate_inflight(lease_monitors& hub) : hub_(hub) {}
  void on(const fact::script_ran& f) override { judge(f.worker, f.op, f.token, f.members, false); }
  void on(const fact::split_add& f) override { judge(f.worker, redis::script_op::acquire, f.token, f.members, true); }

 private:
  void judge(std::size_t wi, redis::script_op op, const std::string& token, std::int64_t members, bool split_add) {
    ADMIT_ASSERT(members >= 0, "a count of members");
    const std::int64_t limit = hub_.limit();
    hub_.level(l_gate_inflight, members, limit, [&] {
      return check::finding{"the gate key holds " + std::to_string(members) + " members, above the limit " +
                                std::to_string(limit) + (split_add ? " (a non-atomic check-then-add)" : "") +
                                " (a member counts until it is removed, past its lease too)",
                            hub_.causes_of([&](cause_finder& c, auto& out) { c.gate(out, wi, op, token, members, split_add); })};
    });
  }
  lease_monitors& hub_;
};

// portal_inflight_le_cap: the connections asked of the portal (open, plus refused attempts still
// counted) against its true cap, at every change.
class portal_inflight final : public fact_sink {
 public:
  explicit portal_inflight(lease_monitors& hub) : hub_(hub) {}
  void on(const fact::portal_refused& f) override { judge(f.at, true); }
  void on(const fact::portal_opened& f) override { judge(f.at, false); }
  void on(const fact::portal_refusal_over& f) override { judge(f.at, false); }
  void on(const fact::portal_closed& f) override { judge(f.at, false); }

 private:
  void judge(const fact::portal_counts& at, bool refused) {
    hub_.level(l_portal_inflight, at.attempted, at.cap, [&] { return violation(at, refused); });
  }
  [[gnu::noinline, gnu::cold]] check::finding violation(const fact::portal_counts& at, bool refused) {
    check::finding f;
    if (at.attempted == at.open)
      f.detail = "worker " + std::to_string(at.worker) + " made " + std::to_string(at.open) +
                 " connections open at the portal, above its true cap " + std::to_string(at.cap);
    else
      f.detail = "worker " + std::to_string(at.worker) + (refused ? " was refused" : " left") + ": " +
                 std::to_string(at.attempted) + " connections asked of the portal (" + std::to_string(at.open) +
                 " open, the rest refused with 429), above its true cap " + std::to_string(at.cap);
    f.causes = hub_.causes_of([&](cause_finder& c, auto& out) { c.portal(out); });
    return f;
  }
  lease_monitors& hub_;
};

// expired_leases_reaped: after an acquire whose script ran, no permit past its expiry by the server's
// clock is left among the holders.
class expired_reaped final : public fact_sink {
 public:
  explicit expired_reaped(lease_monitors& hub) : hub_(hub) {}
  void on(const fact::script_ran& f) override {
    if (!f.judged) return;
    const auto [first, last] = expired_range(f);
    const std::size_t oldest = first;  // a lambda captures a variable, not a structured binding (clang 14)
    hub_.check(l_expiry, first == last, [&] {
      const redis::sorted_set::entry& e = f.holders_after->entries()[oldest];
      acquire_now n;
      n.now_ms = f.script_now_ms();
      n.callers = f.script_now_callers;
      n.past_by_it = e.score <= static_cast<double>(n.now_ms - f.expiry_offset_ms);
      return check::finding{"permit " + e.member + " outlived its lease and was not reaped by an acquire",
                            hub_.causes_of([&](cause_finder& c, auto& out) { c.survivor(out, f.worker, e.member, n); })};
    });
  }

 private:
  lease_monitors& hub_;
};

// liveness: progress while the run goes (acquires refused with permits free for longer than the
// progress bound), at checks.liveness_horizon (idle), and at the end (every item ended, no permit
// live one lease later, something granted if work arrived).
class liveness final : public fact_sink {
 public:
  explicit liveness(lease_monitors& hub) : hub_(hub), progress_bound_ns_(4 * hub.lease_ns()) {
    ADMIT_ASSERT(progress_bound_ns_ > 0, "a lease gate's lease is positive (the loader refuses 0)");
  }

  void on(const fact::script_ran& f) override {
    if (!f.progress) return;
    const auto [first, last] = expired_range(f);
    answered(f, f.members - static_cast<std::int64_t>(last - first));
  }
  void on(const fact::granted&) override { ++holds_; }

  void on(const fact::horizon_reached& f) override {
    std::string why;
    if (f.unended != 0) why = std::to_string(f.unended) + " work items that arrived had not ended";
    else if (f.holders != 0) why = std::to_string(f.holders) + " workers still held a permit";
    hub_.check(l_liveness, why.empty(), [&] {
      return check::finding{"at checks.liveness_horizon (" + scenario::format_duration(f.at_ns) + ") " + why,
                            hub_.causes_of([&](cause_finder& c, auto& out) { c.not_idle(out, f); })};
    });
  }

  void on(const fact::run_ended& f) override {
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

 private:
  // An acquire answered (a reply its rule read): granted, or refused while `live` permits were live by
  // the server's clock. A run in which work arrived and nothing was ever granted is not live, and neither
  // is one whose acquires were refused for longer than the progress bound while fewer than the limit were
  // live. Four leases leave room for the designs that refuse on purpose for a lease or two (a grace after
  // a restart, a fair queue's timed-out head at twice the lease).
  void answered(const fact::script_ran& f, std::int64_t live) {
    ADMIT_ASSERT(live >= 0 && live <= f.members, "the live permits are among the members");
    const vtime_ns now = hub_.now_ns();
    const std::int64_t limit = hub_.limit();
    if (f.reply.granted()) {
      ++grants_;
      starved_since_ns_ = -1;
      return;
    }
    if (holds_ == 0 && grants_ == 0 && refusals_++ == 0) first_refusal_ = f.reply_text();
    if (live >= limit) {
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
    ADMIT_ASSERT(now >= starved_since_ns_ && starved_live_max_ < limit, "a starved stretch began by now, below the limit");
    if (starved_reported_ || now - starved_since_ns_ <= progress_bound_ns_) return;
    starved_reported_ = true;
    hub_.check(l_liveness, false, [&] {
      const std::string detail =
          "acquires were refused from " + span_text(starved_since_ns_) + " to " + span_text(now) + " (" +
          std::to_string(starved_refusals_) + " refusals, the last worker " + std::to_string(f.worker) +
          "'s) while at most " + std::to_string(starved_live_max_) + " of the limit " + std::to_string(limit) +
          " permits were live by the server's clock: longer than the progress bound (" +
          span_text(progress_bound_ns_) + ", four leases)";
      return check::finding{"capacity stayed free while work waited: " + detail,
                            {check::cause{check::cause_kind("refused_with_free_capacity"), detail}}};
    });
  }

  void not_live(const std::string& why, bool items_unended) {
    hub_.check(l_liveness, why.empty(), [&] {
      return check::finding{why, hub_.causes_of([&](cause_finder& c, auto& out) { c.not_live(out, items_unended); })};
    });
  }

  void progress_at_end(std::uint64_t arrived) {
    if (arrived == 0 || holds_ != 0) return;
    hub_.check(l_liveness, false, [&] {
      std::string detail = count_text(static_cast<std::int64_t>(arrived), "work item", "work items") +
                           " arrived and no acquire was granted: ";
      detail += refusals_ == 0
                    ? std::string("no acquire got an answer its rule could read (Redis unreachable, or every reply lost)")
                    : count_text(static_cast<std::int64_t>(refusals_), "reply was", "replies were") +
                          " read as refusals, the first " + first_refusal_;
      return check::finding{"nothing was granted while work arrived",
                            {check::cause{check::cause_kind("never_granted"), detail}}};
    });
  }

  lease_monitors& hub_;
  const vtime_ns progress_bound_ns_;
  std::uint64_t grants_ = 0;            // acquires the server answered with a grant (single-node runs)
  std::uint64_t holds_ = 0;             // permits workers came to hold (every run: a quorum's too)
  vtime_ns starved_since_ns_ = -1;      // the first refusal with permits free since the last grant (-1: none)
  std::uint64_t starved_refusals_ = 0;  // refusals since then
  std::int64_t starved_live_max_ = 0;   // the most permits live at those refusals
  bool starved_reported_ = false;       // one violation per window
  std::uint64_t refusals_ = 0;          // refusals read before any grant
  std::string first_refusal_;           // the first of them, as the reply read
};

// capacity_conserved: for a protocol whose holders count free permits, after every command the free
// permits plus the holders (live, or expired and not yet reaped) equal the limit.
class capacity_conserved final : public fact_sink {
 public:
  explicit capacity_conserved(lease_monitors& hub) : hub_(hub) {}
  void on(const fact::script_ran& f) override {
    if (!f.free) return;
    ADMIT_ASSERT(f.held >= 0, "a count of holders");
    const std::int64_t free = *f.free;
    const std::int64_t held = f.held;
    const std::int64_t limit = hub_.limit();
    const std::int64_t off = free + held - limit;  // < 0: permits lost; > 0: permits beyond the limit
    hub_.level(l_capacity, off < 0 ? -off : off, 0, [&] {
      const std::string sum = std::to_string(free) + " free + " + std::to_string(held) + " held = " +
                              std::to_string(free + held);
      const std::string detail =
          "after worker " + std::to_string(f.worker) + "'s " + redis::script_op_name(f.op) + " for " + f.token + " at " +
          span_text(hub_.now_ns()) + ", " + sum + (off < 0 ? ", below" : ", above") + " the limit " +
          std::to_string(limit) + ": " +
          (off < 0 ? count_text(-off, "permit", "permits") + " lost for good (no caller can take it, no holder holds it)"
                   : count_text(off, "permit", "permits") + " beyond the limit a caller can take");
      return check::finding{
          detail, {check::cause{off < 0 ? check::cause_kind("permit_lost") : check::cause_kind("permit_surplus"), detail}}};
    });
  }

 private:
  lease_monitors& hub_;
};

}  // namespace

namespace {
template <class Component>
std::unique_ptr<fact_sink> build(lease_monitors& hub, fact_bus& bus) {
  auto c = std::make_unique<Component>(hub);
  bus.subscribe(*c);
  return c;
}
}  // namespace

std::unique_ptr<fact_sink> make_gate_inflight(lease_monitors& hub, fact_bus& bus) {
  return build<gate_inflight>(hub, bus);
}
std::unique_ptr<fact_sink> make_portal_inflight(lease_monitors& hub, fact_bus& bus) {
  return build<portal_inflight>(hub, bus);
}
std::unique_ptr<fact_sink> make_expired_reaped(lease_monitors& hub, fact_bus& bus) {
  return build<expired_reaped>(hub, bus);
}
std::unique_ptr<fact_sink> make_liveness(lease_monitors& hub, fact_bus& bus) { return build<liveness>(hub, bus); }
std::unique_ptr<fact_sink> make_capacity_conserved(lease_monitors& hub, fact_bus& bus) {
  return build<capacity_conserved>(hub, bus);
}

lease_invariants::lease_invariants(lease_monitors& hub, fact_bus& bus) {
  // The causes may have subscribed before them (what they keep is then whole when an invariant asks).
  const std::size_t before = bus.subscribers();
  ADMIT_ASSERT(before <= 1, "the invariants and the monitors follow the causes, if any, and nothing else");
  for (const judged phase : {judged::before_trace, judged::after_trace}) {
    if (phase == judged::after_trace) bus.subscribe(hub);
    for (const lease_invariant_row& row : lease_invariant_rows) {
      if (row.phase != phase || !hub.checks(row.index)) continue;
      auto& slot = parts_[row.index];
      ADMIT_ASSERT(slot == nullptr, "one component per invariant");
      slot = row.make(hub, bus);
      ADMIT_ASSERT(slot != nullptr, "a row's component is built");
      ++built_;
    }
  }
  ADMIT_ASSERT(built_ <= l_count && bus.subscribers() == before + built_ + 1,
               "each checked invariant and the monitors subscribed");
}

}  // namespace admit::world::lease

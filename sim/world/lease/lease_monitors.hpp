// lease_monitors: what the lease world checks and measures, on the shared
// check::monitor (invariants, probes, trace ring, what a violation does).
//
// The five invariants, in the report's order: live members of the gate key
// <= the limit after every script (the gate's view); open portal connections
// <= the portal's true cap; no token granted while already a member; no
// permit older than the lease survives an acquire; and liveness (every item
// ended and, one lease after the end, no permit left in the set). The parts
// report what happened (a script ran, a connection was asked for, a lease
// was reaped); the monitors judge it, count the probes and trace it.
//
// A trace entry is kept as its parts (`trace_text`) and made into text only
// for the entries the report shows: tracing costs no allocation once the
// ring's slots hold words of a token's length. With a trace sink
// (stream_trace) every entry also goes there, its text made in one buffer.
//
// Why a violation happened is the world's to say (lease_causes.hpp, through
// `cause_finder`): the monitors ask only when a violation is described (a
// level window opens or peaks, an event check fails), never on a step that
// holds.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <functional>
#include <vector>

#include "gate/redis/lease_scripts.hpp"
#include "sim/check/causes.hpp"
#include "sim/check/monitor.hpp"
#include "sim/check/trace_sink.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease/permit_loss.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::lease {

using sim::vtime_ns;

enum lease_inv : std::size_t { l_gate_inflight, l_portal_inflight, l_expiry, l_liveness, l_capacity, l_count };
inline constexpr std::array<const char*, l_count> lease_invariant_names = {
    "gate_inflight_le_cap", "portal_inflight_le_cap", "expired_leases_reaped", "liveness", "capacity_conserved"};
static_assert(check::are_world_rows(lease_invariant_names, check::world_lease),
              "the lease world reports exactly the invariant table's lease rows");

enum lease_probe : std::size_t {
  lp_refused_at_limit,
  lp_granted_after_backoff,
  lp_deferred,
  lp_deferred_unreachable,
  lp_lost_reply,
  lp_reaped_live,
  lp_failed_release,
  lp_renewal_lost,
  lp_crash_while_holding,
  lp_portal_429,
  lp_client_read_timeout,
  lp_regranted,
  lp_count,
};
inline constexpr std::array<const char*, lp_count> lease_probe_names = {
    "acquire refused at the limit",
    "granted after backing off",
    "item deferred at the acquire timeout",
    "item deferred: Redis unreachable",
    "a script ran but its reply was lost",
    "lease reaped while its holder worked",
    "release failed (expiry is the backstop)",
    "renewal found the lease gone",
    "crash while holding a permit",
    "portal answered 429",
    "client read timeout at the portal",
    "a held token granted again (no second permit)",
};

// The text of one trace entry, `head word mid number tail`, named part by
// part: trace_text("acquire ").word(token), trace_text("open item ").number(n).
class trace_text {
 public:
  explicit trace_text(const char* head = "") noexcept : head_(head) {}
  trace_text& word(std::string_view w) noexcept {
    word_ = w;
    return *this;
  }
  // A number after the word, with the text before (`mid`) and after it.
  trace_text& number(std::int64_t n, const char* mid = nullptr, const char* tail = nullptr) noexcept {
    has_number_ = true;
    number_ = n;
    mid_ = mid;
    tail_ = tail;
    return *this;
  }

 private:
  friend class lease_monitors;
  const char* head_;
  std::string_view word_;
  const char* mid_ = nullptr;
  bool has_number_ = false;
  std::int64_t number_ = 0;
  const char* tail_ = nullptr;
};

// The now an acquire's script compared its permits with, for a permit it left
// past its lease by the server's clock: whether that now was the caller's
// clock (passed as an argument, taken when the call was sent), and whether the
// permit was past its lease by that now as well (the script does not reap all
// it could see was over).
struct acquire_now {
  std::int64_t now_ms = 0;  // ms since the Unix epoch
  bool callers = false;
  bool past_by_it = false;
};

// What the world knows of why an invariant broke: each call appends causes
// (check::cause) to `out`. Asked only while a violation is described.
class cause_finder {
 public:
  // portal_inflight_le_cap: the connections asked of the portal that no
  // permit in the set covers, and why (a refused attempt still counted whose
  // worker has let its permit go gives what filled the portal when it was
  // refused).
  virtual void portal(std::vector<check::cause>& out) = 0;
  // reject_429, as an attempt is refused: what fills the portal now, kept
  // without its sentences (made only if a violation asks).
  virtual void refusal(refusal_snapshot& out) = 0;
  // gate_inflight_le_cap: the live members after worker `wi`'s `op` for `token`.
  virtual void gate(std::vector<check::cause>& out, std::size_t wi, redis::script_op op, std::string_view token,
                    std::int64_t members, bool split_add) = 0;
  // Not a violation: `token`, already a member, granted again to worker `wi`
  // (a retried acquire whose first reply was lost; a set's member takes no
  // second permit). What became of the first reply, in one sentence.
  virtual std::string regrant(std::size_t wi, std::string_view token) = 0;
  // expired_leases_reaped: `member` survived worker `wi`'s acquire, whose script read `now`.
  virtual void survivor(std::vector<check::cause>& out, std::size_t wi, std::string_view member,
                        const acquire_now& now) = 0;
  // liveness at the end: items never ended, or permits left one lease later.
  virtual void not_live(std::vector<check::cause>& out, bool items_unended) = 0;
  // liveness at checks.liveness_horizon.
  virtual void not_idle(std::vector<check::cause>& out, vtime_ns lh_ns) = 0;

 protected:
  ~cause_finder() = default;
};

// Which liveness failure the end found (lease_monitors::at_end).
enum class end_state : std::uint8_t { live, items_unended, permits_left };

class lease_monitors {
 public:
  // `trace_capacity` 0: no trace kept (entries are still counted).
  lease_monitors(sim::scheduler& sched, const scenario::scenario& sc, std::size_t trace_capacity,
                 run_metrics& metrics, lease_metrics& lease);

  // The world's causes, once every part exists (before the run starts).
  void set_causes(cause_finder* finder) noexcept { causes_ = finder; }
  // reject_429: what filled the portal as an attempt was refused, into `out`.
  void refusal(refusal_snapshot& out);

  run_metrics& metrics() noexcept { return metrics_; }
  lease_metrics& lease() noexcept { return lease_; }

  [[gnu::always_inline]] void hit(lease_probe p) { mon_.hit(p); }
  // The slot test inline (most runs keep no trace), the entry's fields out of line.
  [[gnu::always_inline]] void trace(const char* source, const trace_text& text, std::int64_t count,
                                    std::uint64_t ref) {
    if (pending_trace* e = mon_.trace()) fill(*e, source, text, count, ref);
  }

  // --- what the Redis side reports ------------------------------------------
  // A script (an acquire, or a renew that reaps) is about to reap the permit `member` of a worker still working under it.
  void reaped_live(std::string_view member, std::size_t holder);
  // The key expired (PEXPIRE) while `holder` still worked under `member`.
  void expired_live(std::string_view member, std::size_t holder);
  // After worker `wi`'s acquire: `survivor` is a permit older than the lease still in the set (nullptr: none).
  // `now`: the now the acquire's script read, asked only for a survivor.
  template <class Now>
  void after_acquire_reaping(std::size_t wi, const std::string* survivor, Now&& now) {
    mon_.check(l_expiry, survivor == nullptr, [&] {
      const acquire_now n = now();
      return check::finding{"permit " + *survivor + " outlived its lease and was not reaped by an acquire",
                            causes_of([&](cause_finder& f, auto& out) { f.survivor(out, wi, *survivor, n); })};
    });
  }
  // The live members after a script: the maxima.
  [[gnu::always_inline]] void members_after_script(std::int64_t members) {
    lease_.set_members_max = std::max(lease_.set_members_max, members);
    metrics_.gate_inflight_max = std::max(metrics_.gate_inflight_max, members);
  }
  // Worker `wi`'s acquire was answered (a reply its rule read, not an error):
  // `granted`, and the permits live after it by the server's clock. The
  // progress rule of liveness: a run in which work arrived and nothing was
  // ever granted is not live, and neither is one whose acquires were refused
  // for longer than progress_bound_ns while fewer than the limit were live.
  // `reply` (read only while nothing was granted yet) is the refusal's text.
  void acquire_answered(std::size_t wi, bool granted, std::int64_t live, const std::function<std::string()>& reply);
  // After worker `wi`'s `op` for `token` (a protocol whose holders count free
  // permits): `free` permits a fresh caller could take and `held` in the
  // holders (live or expired, not yet reaped), against the limit. Judged as a
  // level: how far the sum is from the limit, either way, bound 0.
  void capacity_after(std::size_t wi, const char* op, const std::string& token, std::int64_t free, std::int64_t held);
  // The script's trace entry and its checks.
  void script_ran(std::size_t wi, redis::script_op op, const std::string& token, const redis::script_reply& reply,
                  std::int64_t members, bool was_member);
  // The live members after the add of a non-atomic check-then-add (the mutant's second round trip).
  void members_after_split_add(std::int64_t members);
  void check_split_add(std::size_t wi, const std::string& token, std::int64_t members);

  // --- what a worker reports -----------------------------------------------
  // Its item could not have a permit in time (`why`: the acquire's error).
  void deferred(std::size_t wi, const std::string& token, bool unreachable, const std::string& why,
                std::int64_t holders);
  // fleet.on_acquire_timeout requeue_and_exit: its acquire for `token` gave up (`why`), the item went back to the
  // queue's tail and the worker's loop ended.
  void requeued_and_exited(std::size_t wi, const std::string& token, const std::string& why, std::int64_t holders);
  // It holds the permit `token`, `waited_ns` after its item arrived, after `attempts` acquires.
  [[gnu::always_inline]] void granted(std::size_t wi, const std::string& token, vtime_ns waited_ns,
                                      std::int64_t attempts, std::int64_t holders) {
    metrics_.wait_ns.add(waited_ns);
    ++holds_;
    if (attempts > 1) hit(lp_granted_after_backoff);
    lease_.holders_max = std::max(lease_.holders_max, holders);
    trace("worker", trace_text("holds ").word(token), holders, wi);
  }
  // Its portal call under a permit took `service_ns`.
  [[gnu::always_inline]] void served(vtime_ns service_ns) { metrics_.service_ns.add(service_ns); }
  // Its release got no confirmation (the lease's expiry is the backstop).
  void release_failed();
  // Its renewal found the permit `token` gone.
  void renewal_lost(std::size_t wi, const std::string& token, std::int64_t holders);

  // --- the portal -----------------------------------------------------------
  // Worker `wi` asked for a connection: `attempted` connections are now
  // asked for (open, plus refused attempts still counted), `open` of them
  // open; `refused`: this one was answered 429.
  [[gnu::always_inline]] void portal_attempt(std::size_t wi, std::int64_t attempted, std::int64_t cap,
                                             std::int64_t open, bool refused) {
    metrics_.portal_inflight_max = std::max(metrics_.portal_inflight_max, open);
    lease_.portal_attempted_max = std::max(lease_.portal_attempted_max, attempted);
    mon_.level(l_portal_inflight, attempted, cap, [&] { return portal_violation(wi, attempted, cap, open, refused); });
  }
  // The connections asked for fell to `attempted` (a close, or a refused attempt that stopped counting).
  [[gnu::always_inline]] void portal_level(std::size_t wi, std::int64_t attempted, std::int64_t cap,
                                           std::int64_t open) {
    mon_.level(l_portal_inflight, attempted, cap, [&] { return portal_violation(wi, attempted, cap, open, false); });
  }

  // --- liveness -------------------------------------------------------------
  // At checks.liveness_horizon `lh_ns`: every item that arrived has ended and no worker holds a permit.
  void idle_at(vtime_ns lh_ns, std::uint64_t unended, std::int64_t holders);
  // At the end; `why` empty (and `state` live): live.
  void at_end(const std::string& why, end_state state);
  // At the end, after at_end: `arrived` work items arrived; none granted is a liveness violation.
  void progress_at_end(std::uint64_t arrived);
  // How long acquires may be refused while permits are free before liveness fails: four leases, room for
  // the designs that refuse on purpose for a lease or two (a grace after a restart, a fair queue's
  // timed-out head at twice the lease).
  vtime_ns progress_bound_ns() const noexcept { return progress_bound_ns_; }

  bool stopped() const noexcept { return mon_.stopped(); }
  bool torn_down() const noexcept { return mon_.torn_down(); }
  void tear_down() noexcept { mon_.tear_down(); }

  // The invariants, probes and kept trace, into the run's record.
  void write(run_record& rec);

  // Every trace entry of the run also goes to `sink` (set before the run starts).
  void stream_trace(check::trace_sink& sink);

 private:
  struct pending_trace {
    vtime_ns at_ns = 0;
    const char* source = "";
    const char* head = "";
    std::string word;
    const char* mid = nullptr;
    bool has_number = false;
    std::int64_t number = 0;
    const char* tail = nullptr;
    std::int64_t count = 0;
    std::uint64_t ref = 0;

    std::string text() const;
    void append_text(std::string& out) const;
  };

  // trace_ring's stream: one entry to sink_ as a check::trace_line.
  static void stream_entry(void* self, const pending_trace& e) noexcept;

  void check_gate(std::size_t wi, redis::script_op op, const std::string& token, std::int64_t members, bool split_add);
  // The cold half of a trace entry and of a portal check.
  [[gnu::noinline]] void fill(pending_trace& e, const char* source, const trace_text& text, std::int64_t count,
                              std::uint64_t ref);
  [[gnu::noinline, gnu::cold]] check::finding portal_violation(std::size_t wi, std::int64_t attempted,
                                                               std::int64_t cap, std::int64_t open, bool refused);
  // The causes a finder gives (none without one), or "unexplained" when it names none.
  // An "unexplained" cause carries what the run traced last (the calls with their replies, and the
  // faults), so that a reader can see what the world could not name.
  template <class Ask>
  std::vector<check::cause> causes_of(Ask&& ask) {
    std::vector<check::cause> out;
    if (causes_ == nullptr) return out;  // a part tested alone
    ask(*causes_, out);
    if (out.empty()) out.push_back(check::cause{check::cause_kind("unexplained"), "the world recorded no cause"});
    for (check::cause& c : out)
      if (c.kind == "unexplained") c.detail += recent_calls();
    return out;
  }
  // "; the last calls and faults the run traced: ..." (up to four), or "" when the run keeps no trace.
  [[gnu::cold]] std::string recent_calls() const;

  check::monitor<pending_trace> mon_;
  sim::scheduler& sched_;
  run_metrics& metrics_;
  lease_metrics& lease_;
  std::int64_t limit_;
  check::trace_sink* sink_ = nullptr;
  std::string line_text_;  // the text of the entry being streamed
  cause_finder* causes_ = nullptr;
  // The progress rule (acquire_answered).
  vtime_ns progress_bound_ns_;
  std::uint64_t grants_ = 0;            // acquires the server answered with a grant (single-node runs)
  std::uint64_t holds_ = 0;             // permits workers came to hold (every run: a quorum's too)
  vtime_ns starved_since_ns_ = -1;      // the first refusal with permits free since the last grant (-1: none)
  std::uint64_t starved_refusals_ = 0;  // refusals since then
  std::int64_t starved_live_max_ = 0;   // the most permits live at those refusals
  bool starved_reported_ = false;       // one violation per window
  std::uint64_t refusals_ = 0;          // refusals read before any grant
  std::string first_refusal_;           // the first of them, as the reply read
};

}  // namespace admit::world::lease

// lease_monitors: what the lease world records of a run, on the shared
// check::monitor (invariants, probes, trace ring, what a violation does).
//
// It hears the parts' facts (facts.hpp) and keeps the trace, the probes and
// the metrics. The five invariants, in the report's order (members of
// the gate key <= the limit after every script; connections asked of the
// portal <= its true cap; no permit past its expiry survives an acquire;
// liveness; capacity conserved for a protocol that counts free permits) are
// components of their own (lease_invariants.hpp) that hear the same facts
// and judge them on this monitor, through check, level and causes_of.
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
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "gate/redis/lease_scripts.hpp"
#include "sim/check/causes.hpp"
#include "sim/check/monitor.hpp"
#include "sim/check/trace_sink.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/lease/permit_loss.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::lease {

using sim::vtime_ns;

enum lease_inv : std::size_t { l_gate_inflight, l_portal_inflight, l_expiry, l_liveness, l_capacity, l_count };
inline constexpr std::array<const char*, l_count> lease_invariant_names = {
    "gate_inflight_le_cap", "portal_inflight_le_cap", "expired_leases_reaped", "liveness", "capacity_conserved"};
static_assert(check::are_world_rows(lease_invariant_names, check::world_lease),
              "the lease world reports exactly the invariant table's lease rows");

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
  // gate_inflight_le_cap: the members (expired ones not yet removed too) after worker `wi`'s `op` for `token`.
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
  virtual void not_idle(std::vector<check::cause>& out, const fact::horizon_reached& at) = 0;

 protected:
  ~cause_finder() = default;
};

class lease_monitors final : public fact_sink {
 public:
  // `trace_capacity` 0: no trace kept (entries are still counted).
  lease_monitors(sim::scheduler& sched, const scenario::scenario& sc, std::size_t trace_capacity,
                 run_metrics& metrics, lease_metrics& lease);

  // The world's causes, once every part exists (before the run starts).
  void set_causes(cause_finder* finder) noexcept { causes_ = finder; }

  // --- the facts (facts.hpp): the trace, the probes and the metrics ---------
  // (each invariant is a component of its own that judges the facts on this
  // monitor: lease_invariants.hpp)
  void on(const fact::call_sent& f) override;
  void on(const fact::call_failed& f) override;
  void on(const fact::reply_lost& f) override;
  void on(const fact::permit_taken& f) override;
  void on(const fact::script_ran& f) override;
  void on(const fact::split_add& f) override;
  void on(const fact::script_failed& f) override;
  void on(const fact::reply_inconsistent& f) override;
  void on(const fact::portal_refused& f) override;
  void on(const fact::portal_opened& f) override;
  void on(const fact::portal_closed& f) override;
  void on(const fact::client_left& f) override;
  void on(const fact::acquiring& f) override;
  void on(const fact::sent_without_permit& f) override;
  void on(const fact::gave_up& f) override;
  void on(const fact::granted& f) override;
  void on(const fact::served& f) override;
  void on(const fact::release_failed& f) override;
  void on(const fact::renewal_lost& f) override;
  void on(const fact::worker_crashed& f) override;
  void on(const fact::item_queued& f) override;
  void on(const fact::item_ended& f) override;
  void on(const fact::fault_began& f) override;

  // --- for the invariant components (lease_invariants.hpp) ------------------
  // Whether the scenario checks `which` (checks.invariants).
  bool checks(lease_inv which) const { return mon_.enabled(which); }
  template <class Describe>
  void check(lease_inv which, bool ok, Describe&& describe) {
    mon_.check(which, ok, std::forward<Describe>(describe));
  }
  template <class Describe>
  void level(lease_inv which, std::int64_t value, std::int64_t bound, Describe&& describe) {
    mon_.level(which, value, bound, std::forward<Describe>(describe));
  }
  // The world's causes (nullptr for a part tested alone).
  cause_finder* causes() const noexcept { return causes_; }
  std::int64_t limit() const noexcept { return limit_; }
  vtime_ns lease_ns() const noexcept { return lease_ns_; }
  vtime_ns now_ns() const noexcept { return sched_.now_ns(); }

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

  bool stopped() const noexcept { return mon_.stopped(); }
  bool torn_down() const noexcept { return mon_.torn_down(); }
  void tear_down() noexcept { mon_.tear_down(); }

  // The invariants, probes and kept trace, into the run's record.
  void write(run_record& rec);

  // Every trace entry of the run also goes to `sink` (set before the run starts).
  void stream_trace(check::trace_sink& sink);

 private:
  std::array<std::uint64_t, scenario::fault_kind_count> faults_injected_{};  // by kind, as they began
  // The slot test inline (most runs keep no trace), the entry's fields out of line.
  [[gnu::always_inline]] void trace(const char* source, const trace_text& text, std::int64_t count,
                                    std::uint64_t ref) {
    if (pending_trace* e = mon_.trace()) fill(*e, source, text, count, ref);
  }

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

  // The cold half of a trace entry.
  [[gnu::noinline]] void fill(pending_trace& e, const char* source, const trace_text& text, std::int64_t count,
                              std::uint64_t ref);
  // The portal's maxima (metrics).
  void portal_counts(const fact::portal_counts& at);
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
  vtime_ns lease_ns_;
};

}  // namespace admit::world::lease

// real_run: one run of a lease scenario's fleet in real time against a real
// redis-server, with the shipped Asio lease client (gate/asio/lease_client.hpp
// over resp_transport): the same client logic the simulator steps, on the
// monotonic clock and a real socket (docs/confirm.md).
//
// What is made real. The scenario's arrivals (times from the seed, as the
// simulator draws them), each item's service time (its own, or drawn from
// service.service_time), the workers (fleet.workers coroutines on one
// thread, each with its own client, connection and wall clock: the system
// clock plus its offset, drift and steps), the portal (work runs its service
// time, or under service.on_client_close free_slot until its client closes;
// the client stops waiting at its read timeout and releases, or holds to the
// end when its protocol says so), renewals and what a lost one makes
// the client do (client.on_renewal_lost), an acquire that gives up (deferred,
// or requeued with its worker's exit: fleet.on_acquire_timeout), a protocol's
// set-up, and the faults: a worker's clock step, pause (it stops at its next
// step until the pause ends) and crash (it stops at once and never releases;
// with a duration it comes back as a new process would), and the server's
// pause (SIGSTOP, SIGCONT) and restart (SIGKILL, then a start on the same
// port with the fault's persistence, after its downtime), a partition (each
// worker reaches the server through a link_proxy, which also holds the
// simulated latency), failovers (each a replica of its own behind a link as late as its
// replication lag, promoted) and a client-timeout burst (the read timeouts
// of the items that arrive in it). What is not made real yet is refused
// before anything starts (`unsupported`).
//
// Time. Every duration admitsim knows (the scenario's, the gate's, the client
// policy's) is multiplied by the time scale; a script's own literal durations
// are not. Reported instants are scenario time (real elapsed time divided by
// the scale); lateness is real time.
//
// What is watched: portal_inflight_le_cap (work running at the portal at
// once, against its cap), gate_inflight_le_cap (the members of the
// protocol's holders key, read on a connection of its own every sample_every
// of real time, against the limit) and liveness, by the simulator's rules
// (sim/world/lease/lease_invariants.cpp): acquires refused for longer than
// four leases while fewer than the limit were live by the server's clock (the
// holders as last read, at most sample_fresh old), work left that no worker
// is left to take, nothing granted while work arrived, permits still live
// one lease after the end. A run ends when its last item has ended (or no
// worker is left to take one), or at the first break of any: that break is
// what it had to show.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gate/lease/client_config.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::confirm {

inline constexpr std::chrono::milliseconds sample_every{2};
// A refusal is judged against the holders as last read only when that read is at most this old (real time):
// while the server is down or paused, or its monitor's connection is being made again, it is not judged.
inline constexpr std::chrono::milliseconds sample_fresh{10};
// A real run opens a connection a worker and keeps every item in memory.
inline constexpr std::int64_t real_workers_max = 1'000;
inline constexpr std::uint64_t real_items_max = 1'000'000;
// Each failover promotes a replica and starts the next failover's, a redis-server process each.
inline constexpr int real_failovers_max = 16;

struct run_options {
  double time_scale = 1.0;  // real duration = scenario duration * time_scale (0.01 .. 100)
  std::string redis_program = "redis-server";
  std::uint64_t seed = 0;
  std::chrono::seconds wall_limit{600};  // a run that has not ended by then is inconclusive
  const std::atomic<bool>* interrupted = nullptr;
};

// A level watched over the run: its bound, its first break and its worst.
struct level_check {
  explicit level_check(std::string n) : name(std::move(n)) {}
  std::string name;
  bool watched = true;  // the scenario checks it (watches())
  std::int64_t bound = 0;
  std::int64_t peak = 0;
  std::int64_t peak_at_ns = 0;  // scenario time
  std::optional<std::int64_t> first_at_ns;
  std::string first_detail;
  std::int64_t samples = 0;
  bool holds() const noexcept { return !first_at_ns.has_value(); }
  void see(std::int64_t value, std::int64_t at_ns, const std::string& detail);
};

// liveness as a real run watches it: the answers to acquires that the protocol's rule read, and the
// first break of one of its rules (the simulator's, lease_invariants.cpp).
struct liveness_check {
  std::string name = "liveness";
  std::int64_t grants = 0;            // answers read as grants
  std::int64_t refusals = 0;          // answers read as refusals
  std::int64_t refusals_free = 0;     // refusals while fewer than the limit were live (by a fresh read)
  std::int64_t refusals_unjudged = 0;  // refusals with no fresh read of the holders (the server down, paused)
  std::int64_t longest_free_ns = 0;   // the longest stretch of refusals with capacity free (scenario time)
  std::int64_t bound_ns = 0;          // the progress bound: four leases (scenario time)
  std::optional<std::int64_t> first_at_ns;
  std::string first_detail;
  bool watched = true;  // the scenario checks liveness (watches())
  std::string first_rule;  // the rule: refused_with_free_capacity, items_never_ended, never_granted, permits_left
  bool permits_left_unjudged = false;  // the server did not answer the read at the end (within a second)
  bool holds() const noexcept { return !first_at_ns.has_value(); }
  void broke(std::int64_t at_ns, std::string rule, std::string detail) {
    if (first_at_ns) return;
    first_at_ns = at_ns;
    first_rule = std::move(rule);
    first_detail = std::move(detail);
  }
};

// A fault as intended (scenario time) and as made (scenario time; lateness real).
struct fault_timing {
  std::string kind;
  std::string target;
  std::int64_t intended_ns = 0;
  std::int64_t achieved_ns = 0;
  std::int64_t late_real_ns = 0;
  // A restart's or failover's end: when the server was meant to serve again and when it did (its start, or
  // the links' move, made). The server's own start takes real time: at a small time scale, a larger share of
  // scenario time.
  std::optional<std::int64_t> back_intended_ns, back_achieved_ns, back_late_real_ns;
  std::int64_t latest_real_ns() const noexcept { return std::max(late_real_ns, back_late_real_ns.value_or(0)); }
};

struct run_result {
  std::optional<std::string> inconclusive;  // why the run could not be judged
  std::string server_version;
  level_check portal{"portal_inflight_le_cap"};
  level_check holders{"gate_inflight_le_cap"};
  liveness_check live;
  std::vector<fault_timing> faults;
  std::int64_t items = 0, completed = 0, deferred = 0, crashed = 0;
  std::int64_t aborted = 0;  // requests a lost renewal gave up (abort_request)
  std::int64_t retired = 0;  // workers a lost renewal stopped taking new work (stop_new_work)
  std::int64_t requeued = 0;  // items an acquire gave up put back, its worker exiting (requeue_and_exit)
  std::int64_t arrival_late_max_real_ns = 0;  // the latest an item was queued after its time
  // The lateness the protocol's timing tolerates: a twentieth of its (scaled) lease, in real ns. An arrival
  // or a fault later than that may have changed what the run shows (late_beyond_margin).
  std::int64_t margin_real_ns = 0;
  bool late_beyond_margin() const noexcept {
    std::int64_t late = arrival_late_max_real_ns;
    for (const fault_timing& f : faults) late = std::max(late, f.latest_real_ns());
    return late > margin_real_ns;
  }
  std::int64_t ended_ns = 0;                   // scenario time at the end
  bool stopped_at_break = false;               // it ended at its first violation (what it had to show)
  bool broke() const noexcept { return !portal.holds() || !holders.holds() || !live.holds(); }
};

// The first part of `sc` (with its drawn faults) or of `cfg` that a real run cannot make yet: a JSON path
// and why; nullopt when every part can be made.
std::optional<std::pair<std::string, std::string>> unsupported(const scenario::scenario& sc,
                                                               const gate::lease_client_config& cfg);

// Whether a real run of `sc` watches `invariant`: portal_inflight_le_cap, gate_inflight_le_cap and liveness,
// each when the scenario checks it (checks.invariants; none given: every one), liveness not when the scenario
// sets checks.liveness_horizon (its judgement at that instant is not made real). A break of an invariant it
// does not watch is recorded and ends nothing.
bool watches(const scenario::scenario& sc, std::string_view invariant);

// Runs `sc` (its faults drawn for opts.seed already) with every worker's client configured by `cfg`.
run_result run_real(const scenario::scenario& sc, const gate::lease_client_config& cfg, const run_options& opts);

}  // namespace admit::confirm

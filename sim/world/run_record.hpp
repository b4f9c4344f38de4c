// run_record: everything one run produced, as plain data for the reports.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"
#include "sim/check/histogram.hpp"
#include "sim/check/results.hpp"
#include "sim/check/verdict.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/vtime.hpp"
#include "sim/scenario/fault_kinds.hpp"
#include "sim/world/timeline.hpp"

namespace admit::world {

using sim::vtime_ns;

// The server-side and client-side outcome of one request.
struct request_outcome {
  std::string id;
  vtime_ns arrived_ns = 0;
  bool responded = false;
  int http_status = 0;
  std::string status;  // completed, queue_full, wait_timeout, cancelled, internal_error
  vtime_ns responded_ns = -1;
  bool client_timed_out = false;  // the client stopped reading first (ReadTimeout)
};

// One line of the bounded trace kept for the report.
struct trace_entry {
  vtime_ns at_ns = 0;
  std::string source;  // gate name, "portal" or "request"
  std::string what;    // a gate status, "begin"/"end", or a request event
  std::int64_t active = 0;
  std::int64_t waiting = 0;
  std::uint64_t ref = 0;  // ticket, or request number
};

using check::invariant_result;
using check::violation;

struct run_metrics {
  std::uint64_t requests = 0;
  std::uint64_t completed = 0;
  std::map<std::string, std::uint64_t> refused;  // by reason, sorted by name
  std::uint64_t client_timeouts = 0;
  std::int64_t gate_inflight_max = 0;
  std::int64_t portal_inflight_max = 0;
  std::int64_t waiting_max = 0;
  vtime_ns simulated_ns = 0;
  check::histogram wait_ns;     // arrival to lease (admitted or promoted)
  check::histogram service_ns;  // lease to the end of the work
};

// What the kernel did to produce the run, as opposed to what the run did. A
// faster kernel may run fewer events or draw fewer sequence numbers for the
// same run, so the catalogue's golden tests leave these out; replay still
// compares them, so within one build they are as deterministic as the rest.
// A lease fleet whose clients were child processes (docs/process-gate.md, "A fleet's client").
struct process_exchanges {
  std::uint64_t messages = 0;     // requests sent to the children (their starts included, their stops not)
  std::uint64_t wakes_ahead = 0;  // wake-ups a child had answered ahead, for which no message went
};

struct run_diagnostics {
  std::uint64_t events = 0;            // scheduler events run
  std::uint64_t sequence_numbers = 0;  // sequence numbers the scheduler drew (one per post and timer)
  std::optional<process_exchanges> process;  // a fleet of process clients: their exchanges
};

// What only the lease world measures.
struct lease_metrics {
  std::int64_t holders_max = 0;            // workers that believed they held a permit at once
  std::uint64_t portal_429 = 0;            // connections the portal refused above its true cap
  std::int64_t portal_attempted_max = 0;   // most connections asked of the portal at once (open + refused, still counted)
  std::uint64_t leases_reaped_live = 0;    // permits reaped while their holder was still working
  std::uint64_t deferred = 0;              // items whose permit could not be had in time
  std::uint64_t redis_calls = 0;           // script calls sent
  std::uint64_t redis_errors = 0;          // calls that ended without a reply (lost, down, timed out)
  std::uint64_t failed_releases = 0;       // releases that got no confirmation (expiry is the backstop)
  std::uint64_t renewals_lost = 0;         // renewal variant: renewals answered "no longer held"
  std::int64_t set_members_max = 0;        // largest ZCARD the gate key reached
  std::uint64_t regrants = 0;              // acquires that granted a token already a member (no second permit)
  std::string regrant_example;             // the first of them: what became of its first reply
  // fleet.on_acquire_timeout requeue_and_exit (the run_fleet worker model): the report writes these two only then.
  bool requeue_and_exit = false;
  std::uint64_t items_requeued = 0;        // items an acquire gave up on, put back at the queue's tail
  std::uint64_t workers_exited = 0;        // worker loops ended by such an acquire
  std::uint64_t items_left = 0;            // items still in the queue when the run ended
};

struct captured_snapshot {
  std::string gate;
  vtime_ns at_ns = 0;
  fifo::snapshot snap;
};

// Why a run could not finish, so that nothing it did not see is judged:
// kind is "event_budget" (checks.max_events), "horizon" (checks.horizon came
// before every request ended), "fault_draw_limit" (faults.rates asked for
// more faults of a kind than a run draws), "wall_limit" (checks.max_wall) or
// "script_error" (a protocol's script failed: its error, line and call) or
// "protocol_inconsistent" (a protocol's client read a grant, or a kept
// renewal, for a token its holders do not show: server_side::inconsistency).
// A protocol's script (or command) that failed: the run stops there.
struct script_failure {
  std::string operation;  // "acquire", "release" or "renew"
  std::string script;     // the protocol's name for the script ("" for a plain command)
  std::string origin;     // the file the script came from ("inline" for a source in the protocol)
  std::string message;    // the error reply, as Redis gives it
  int line = 0;           // the script's line, 0 when unknown
  std::string command;    // the redis.call that raised it ("" when not a command's)
  bool step_limit = false;
  bool memory_limit = false;
  std::string token;
  std::size_t worker = 0;
  vtime_ns at_ns = 0;
};

struct inconclusive_reason {
  std::string kind;
  std::string detail;  // one sentence in the domain's words, with the figures
  std::optional<script_failure> script{};  // kind "script_error"
};

struct run_record {
  std::uint64_t seed = 0;
  sim::run_status status = sim::run_status::idle;
  // Set when the run could not finish. Liveness is then not judged; a safety
  // violation seen before the cut still counts (it happened).
  std::optional<inconclusive_reason> inconclusive;
  std::vector<invariant_result> invariants;  // in a fixed order per world
  run_metrics metrics;
  run_diagnostics diagnostics;
  std::optional<lease_metrics> lease;  // lease-gate runs only
  std::string variant;                 // lease-gate runs: the protocol variant
  std::string gate_core;               // the team's own core every gate ran (own_gate.hpp); "": admitsim's
  std::vector<captured_snapshot> snapshots;
  std::map<std::string, request_outcome> outcomes;  // requests the cases refer to
  std::vector<trace_entry> trace;                   // bounded: the entries before the first violation
  timeline series;                                  // in-flight and queue over time, faults, lanes (HTML)
  check::probe_counts probes;  // in a fixed order per world (sim/check/results.hpp)
  // Which faults met which states, bucket by bucket in a fixed order per world (the lease world's:
  // lease/lease_coverage.hpp; empty for the FIFO world, whose coverage is its probes).
  check::probe_counts coverage;
  // The faults the run injected (those whose time it reached), by kind (scenario::fault_kind order):
  // the evidence a search that found nothing rests on (reports/evidence.hpp).
  std::array<std::uint64_t, scenario::fault_kind_count> faults_injected{};
  std::uint64_t trace_dropped = 0;                  // older entries that fell out of the bound

  bool any_violation() const { return check::any_broken(invariants); }
  // "violation", "inconclusive" or "pass" (sim/check/verdict.hpp).
  const char* verdict() const { return check::verdict_of(invariants, inconclusive.has_value()); }
  const captured_snapshot* find_snapshot(const std::string& gate, vtime_ns at_ns) const {
    for (const auto& s : snapshots)
      if (s.gate == gate && s.at_ns == at_ns) return &s;
    return nullptr;
  }
};

}  // namespace admit::world

// scenario: the typed form of a scenario file (see docs/scenarios.md).
//
// A scenario is data: the gates under test, the workload that hits them, the
// service (portal) behind them, the checks to run and the verdict expected.
// The loader (loader.hpp) turns JSON into this form and rejects anything it
// does not understand with the JSON path of the offending value. Every time
// is integer nanoseconds of virtual time since the run started.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <compare>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/protocol.hpp"
#include "sim/check/invariants.hpp"
#include "sim/check/verdict.hpp"
#include "sim/kernel/distribution.hpp"
#include "sim/kernel/vtime.hpp"
#include "sim/scenario/fault_kinds.hpp"

namespace admit::scenario {

using sim::vtime_ns;

enum class gate_kind : std::uint8_t {
  fifo,   // the process-local FIFO gate (gate/fifo)
  lease,  // the fleet-wide Redis lease semaphore (gate/redis)
};

// How a lease client waits between acquire attempts.
struct backoff_spec {
  enum class kind : std::uint8_t { fixed, exponential };
  enum class jitter : std::uint8_t { none, full };
  kind k = kind::fixed;
  vtime_ns delay_ns = 200 * sim::ms;  // fixed: every wait
  vtime_ns base_ns = 50 * sim::ms;    // exponential: the first wait, doubled per attempt ...
  vtime_ns max_ns = 2 * sim::sec;     // ... up to this
  jitter jit = jitter::full;          // exponential: full = uniform in [0, wait]

  friend bool operator==(const backoff_spec&, const backoff_spec&) = default;
};

inline constexpr std::int64_t lease_limit_max = 100'000;
// The most independent Redis nodes a lease gate may run over (a quorum protocol's).
inline constexpr std::int64_t redis_nodes_max = 9;

// A lease protocol a scenario names (gate "protocol"): the typed protocol and
// the JSON object it was read from (every script inline, as compact JSON
// text), which is what a scenario written back out (a shrunk counterexample)
// carries.
struct protocol_ref {
  std::shared_ptr<const redis::protocol> proto;
  std::string source_json;

  friend bool operator==(const protocol_ref& a, const protocol_ref& b) {
    return (a.proto == b.proto || (a.proto && b.proto && *a.proto == *b.proto)) && a.source_json == b.source_json;
  }
};

struct lease_params {
  // The runs of the gate, each a separate run of the scenario, named in the
  // report: first the built-in variants (their protocol files, compiled in, by
  // the enum that also names the engine's C++ twins of their scripts), in file order,
  // then the protocols (their Lua, through the embedded interpreter), in file
  // order. Names are distinct. A gate with protocols and no "variant" runs
  // only its protocols.
  std::vector<redis::variant> variants{redis::variant::seed};
  std::vector<protocol_ref> protocols;
  std::int64_t limit = 1;                         // permits: 1 .. 100'000
  vtime_ns lease_ns = 15 * sim::sec;              // a member older than this is reaped
  vtime_ns acquire_timeout_ns = 30 * sim::sec;    // the client gives up (defers) after this
  backoff_spec backoff;
  vtime_ns renew_every_ns = 5 * sim::sec;         // renewal variant; default lease / 3
  std::optional<vtime_ns> queue_timeout_ns;       // fair variant: a waiter leaves the queue after this
  std::string key = "admitsim:inflight";          // the sorted set's key
  // Independent Redis nodes (1 .. redis_nodes_max), each with its own set, clock, state and links.
  // Above 1 every run of the gate is a protocol whose client.quorum is "majority" (the loader refuses others).
  std::int64_t redis_nodes = 1;

  friend bool operator==(const lease_params&, const lease_params&) = default;
};

// Whether some run of the gate reads its gate-level client fields: the
// variants always do; a protocol where its file is silent. The loader refuses
// a field no run reads, and a scenario written back out writes those it reads.
inline bool reads_acquire_timeout(const lease_params& l) {
  return !l.variants.empty() || std::any_of(l.protocols.begin(), l.protocols.end(), [](const protocol_ref& p) {
           return !p.proto->client.acquire_timeout_ns;
         });
}
inline bool reads_backoff(const lease_params& l) {
  return !l.variants.empty() ||
         std::any_of(l.protocols.begin(), l.protocols.end(), [](const protocol_ref& p) { return !p.proto->client.retry; });
}
inline bool reads_renew_every(const lease_params& l) {
  return std::find(l.variants.begin(), l.variants.end(), redis::variant::renewal) != l.variants.end() ||
         std::any_of(l.protocols.begin(), l.protocols.end(), [](const protocol_ref& p) {
           return p.proto->renew && !p.proto->client.renew_every_ns && !p.proto->client.renew_every_lease_fraction;
         });
}
inline bool reads_queue_timeout(const lease_params& l) {
  return std::find(l.variants.begin(), l.variants.end(), redis::variant::fair) != l.variants.end() ||
         std::any_of(l.protocols.begin(), l.protocols.end(), [](const protocol_ref& p) {
           return p.proto->uses(redis::placeholder::queue_timeout_ms);
         });
}

// The names of a gate's runs, in run order: the variants', then the protocols'.
inline std::vector<std::string> run_names(const lease_params& l) {
  std::vector<std::string> out;
  for (redis::variant v : l.variants) out.emplace_back(std::string(redis::to_string(v)));
  for (const protocol_ref& p : l.protocols) out.push_back(p.proto->name);
  return out;
}
inline std::size_t run_count(const lease_params& l) { return l.variants.size() + l.protocols.size(); }

// Keeps only the run named `name`; false (and `l` unchanged) when the gate has none of that name.
inline bool keep_only_run(lease_params& l, std::string_view name) {
  for (redis::variant v : l.variants)
    if (name == std::string(redis::to_string(v))) {
      l.variants = {v};
      l.protocols.clear();
      return true;
    }
  for (const protocol_ref& p : l.protocols)
    if (name == p.proto->name) {
      protocol_ref keep = p;
      l.variants.clear();
      l.protocols = {std::move(keep)};
      return true;
    }
  return false;
}

// The gate's runs one by one: copies of `l` holding one run each, in run order.
inline std::vector<lease_params> one_run_each(const lease_params& l) {
  std::vector<lease_params> out;
  for (const std::string& name : run_names(l)) {
    out.push_back(l);
    keep_only_run(out.back(), name);
  }
  return out;
}

// Deliberately broken drivers, for showing that the monitors and the search
// catch each kind of bug (docs/mutants.md). `none` is the real code.
enum class world_mutation : std::uint8_t {
  none,
  release_before_work_ends,  // fifo: the handler releases its lease as soon as the work starts
  fail_open,                 // lease: a client that cannot reach Redis sends the request anyway
  check_then_add,            // lease: acquire as two round trips (count, then add): not atomic
  no_reaping,                // lease: acquire never removes expired permits
  quorum_off_by_one,         // lease, quorum client: a permit counts with N/2 grants instead of N/2 + 1
};
inline constexpr const char* world_mutation_names[] = {"none",           "release_before_work_ends", "fail_open",
                                                       "check_then_add", "no_reaping",               "quorum_off_by_one"};

// A FIFO gate whose core is a child process (docs/process-gate.md).
struct process_spec {
  std::vector<std::string> command;   // the program and its arguments
  std::string name;                   // as reports name the core ("process:" + name); "": from the command
  std::string cwd;                    // absolute: the scenario's folder joined with its "cwd"
  vtime_ns message_timeout_ns = 10 * sim::sec;  // wall time the child may take per message

  friend bool operator==(const process_spec&, const process_spec&) = default;
};
inline constexpr std::size_t process_command_words_max = 64;
inline constexpr std::size_t process_command_word_bytes_max = 4096;
inline constexpr vtime_ns process_message_timeout_ns_max = 600 * sim::sec;
// The most workers a lease fleet whose client is a process may have (one child each).
inline constexpr std::int64_t lease_process_workers_max = 64;

struct gate_spec {
  std::string name = "gate";
  world_mutation world_mut = world_mutation::none;
  gate_kind kind = gate_kind::fifo;
  fifo::config fifo;   // kind fifo: max_active, max_waiting, wait_deadline_ns, event_log_capacity, mutation
  lease_params lease;  // kind lease
  // kind fifo: the core runs in this child process; kind lease: each worker's client runs in a child of
  // this command (the run is the seed variant's server side).
  std::optional<process_spec> process;

  // The cap this gate promises: max_active (fifo) or limit (lease).
  std::int64_t cap() const { return kind == gate_kind::fifo ? fifo.max_active : lease.limit; }
};

// A node of the simulated system, as fault targets name it: "worker:3",
// "redis", "portal".
struct node_ref {
  enum class kind : std::uint8_t { worker, redis, portal };
  kind k = kind::worker;
  std::int64_t worker = 0;  // kind worker: 0 .. fleet.workers - 1

  friend bool operator==(const node_ref&, const node_ref&) = default;
  friend auto operator<=>(const node_ref&, const node_ref&) = default;
};
std::string to_string(const node_ref& n);  // "worker:3", "redis", "portal"

inline constexpr std::int64_t workers_max = 100'000;
inline constexpr std::int64_t drift_ppm_max = 1'000'000;
inline constexpr vtime_ns clock_offset_ns_max = 24LL * 3600 * sim::sec;

// A worker's wall clock reads virtual time + offset_ns + drift: at virtual
// time t it reads t + offset_ns + t * drift_ppm / 1'000'000 (the world owns
// the rounding). The Redis server's clock is virtual time, moved by faults.
struct clock_spec {
  vtime_ns offset_ns = 0;        // -24h .. +24h
  std::int64_t drift_ppm = 0;    // -1'000'000 .. 1'000'000

  friend bool operator==(const clock_spec&, const clock_spec&) = default;
};

// What a lease-world worker does when its acquire gives up (an acquire
// timeout, or Redis unreachable to the deadline): `defer` ends the item as
// deferred and takes the next one; `requeue_and_exit` (the design document's
// run_fleet loop) puts the item back at the tail of the queue and ends the
// worker's loop, so the fleet shrinks under a surge (docs/scenarios.md, "Fleet").
enum class acquire_timeout_policy : std::uint8_t { defer, requeue_and_exit };

struct fleet_spec {
  std::int64_t workers = 1;                      // 1 .. 100'000
  acquire_timeout_policy on_acquire_timeout = acquire_timeout_policy::defer;
  clock_spec clock;                              // every worker's, unless overridden
  std::vector<std::pair<std::int64_t, clock_spec>> clocks;  // overrides, ascending worker index, distinct

  // The clock of worker `w` (an override, or the default).
  clock_spec clock_of(std::int64_t w) const {
    const auto it = std::lower_bound(clocks.begin(), clocks.end(), w,
                                     [](const auto& entry, std::int64_t index) { return entry.first < index; });
    return it != clocks.end() && it->first == w ? it->second : clock;
  }
};

// How a request's server-side work ends, when it does not simply complete.
enum class failure : std::uint8_t {
  none,
  constructor,  // the worker fails while setting up, before any work: HTTP 500
};

struct request_spec {
  std::string id;
  std::string gate;                         // which gate it enters
  std::size_t gate_index = 0;               // its index in scenario::gates
  vtime_ns at_ns = 0;                       // arrival
  std::optional<vtime_ns> service_ns;       // work duration; default: service.service_time
  std::optional<vtime_ns> cancel_at_ns;     // the server-side handler is cancelled then
  std::optional<vtime_ns> client_timeout_ns;  // the client stops reading after this long
  failure fail = failure::none;
};

// A generator of requests: `count` requests from `start` on, spaced as its
// kind says. The exact formulas are in docs/scenarios.md and arrivals.hpp.
enum class arrival_kind : std::uint8_t { constant, poisson, ramp, deadline_surge };

inline constexpr std::int64_t arrival_count_max = 100'000'000;
inline constexpr std::size_t arrival_generators_max = 1'000;
inline constexpr std::size_t explicit_requests_max = 1'000'000;
// No arrival is ever later than this (100 days); the loader rejects
// generators whose last arrival would be later, and Poisson times clamp here.
inline constexpr vtime_ns arrival_time_limit_ns = 100LL * 24 * 3600 * sim::sec;

// The id of a generated request: "arrivals/<generator>/<seq>", both counted
// from 0 ("arrivals/0/0" is the first request of the first generator). An
// explicit request's id cannot contain '/', so the two never collide.
std::string generated_request_id(std::size_t generator, std::uint64_t seq);

struct arrival_spec {
  arrival_kind kind = arrival_kind::constant;
  std::int64_t count = 1;          // 1 .. 100'000'000
  vtime_ns start_ns = 0;           // the first arrival (poisson: the process starts here)
  std::string gate;                // which gate the requests enter
  std::size_t gate_index = 0;      // its index in scenario::gates
  vtime_ns every_ns = 0;           // constant: the gap
  vtime_ns mean_gap_ns = 0;        // poisson: the mean of the exponential gaps
  vtime_ns gap_from_ns = 0;        // ramp: the first gap ...
  vtime_ns gap_to_ns = 0;          // ... moving linearly to the last
  vtime_ns deadline_ns = 0;        // deadline_surge: the instant of the deadline (> start)
  vtime_ns gap_far_ns = 0;         // deadline_surge: the gap at start ...
  vtime_ns gap_near_ns = 0;        // ... shrinking linearly in the remaining time to this at the deadline
  std::optional<sim::duration_dist> service;   // overrides service.service_time
  std::optional<vtime_ns> client_timeout_ns;   // overrides service.client_timeout
  std::optional<vtime_ns> cancel_after_ns;     // the handler is cancelled this long after arrival
  std::int64_t fail_ppm = 0;                   // parts per million whose worker fails while starting
};

struct service_spec {
  // What the lease world's portal does above its true cap. A portal that
  // queued excess connections instead ("queue") is not modelled, and the
  // loader refuses it rather than run it as another policy.
  enum class over_cap_policy : std::uint8_t {
    reject_429,  // above its true cap the portal answers 429 at once (the attempt is counted)
    serve,       // the portal serves it: the true over-cap in-flight count
  };
  // What the lease world's portal does when a client closes its connection
  // (a read timeout, a crash, a client giving up the call).
  enum class client_close_policy : std::uint8_t {
    keep_work,  // the work goes on to its end and keeps its slot
    free_slot,  // the portal stops the work and frees its slot at once
  };
  std::optional<std::int64_t> portal_cap;  // true concurrency cap; default: the gates' total
  sim::duration_dist service_time = sim::duration_dist::fixed(350 * sim::ms);
  std::optional<vtime_ns> client_timeout_ns;  // default client read timeout
  over_cap_policy over_cap = over_cap_policy::reject_429;
  client_close_policy on_client_close = client_close_policy::keep_work;
};

// fault_kind, its names and what each kind takes: the table in
// sim/scenario/fault_kinds.hpp.

enum class persistence : std::uint8_t {
  none,          // a restart forgets every key
  aof_everysec,  // a restart keeps what was written up to the last whole second
  aof_always,    // every write is durable before its reply: a restart keeps everything
};

struct fault_spec {
  vtime_ns at_ns = 0;
  fault_kind kind = fault_kind::crash;
  std::optional<node_ref> target;              // every kind but a partition given by `between`
  std::optional<std::pair<node_ref, node_ref>> between;  // partition of one link (two distinct nodes)
  std::optional<vtime_ns> duration_ns;         // pause, partition, client_timeout_burst: required;
                                               // crash: restart after (none: never); redis_*: downtime (0)
  vtime_ns step_ns = 0;                        // clock_step: signed, not zero
  persistence persist = persistence::none;     // redis_restart
  vtime_ns replication_lag_ns = 0;             // redis_failover: writes this recent are lost
  vtime_ns client_timeout_ns = 0;              // client_timeout_burst
  // A fault on "redis" (its target, or one end of its link): which of the gate's
  // redis_nodes it strikes (0 .. redis_nodes - 1). Always 0 for a fault not on Redis.
  std::int64_t node = 0;
};

inline constexpr std::int64_t fault_rate_per_hour_max = 3'600;

// Rates from which the world draws a schedule from the seed. The loader only
// types and checks them; the drawing (documented in docs/scenarios.md as the
// intended contract) belongs to the world: each kind a Poisson process of its
// rate until until_ns, pause and partition durations with mean
// mean_duration_ns, clock steps of at most max_step_ns either way.
struct fault_rates {
  // Per kind, by fault_kind: 0 .. fault_rate_per_hour_max, and always 0 for a
  // kind the rates cannot draw (fault_kind_table, `rate`). Redis kinds: lease gate only.
  std::array<std::int64_t, fault_kind_count> per_hour{};
  vtime_ns max_step_ns = 1 * sim::sec;
  vtime_ns mean_duration_ns = 5 * sim::sec;
  vtime_ns max_replication_lag_ns = 1 * sim::sec;  // drawn failovers lose up to this much
  vtime_ns until_ns = 0;  // no fault is drawn at or after it; required when a rate is set
  // What a drawn Redis restart keeps: one of these, uniformly (1 to 3 distinct; by default the fair coin
  // between none and aof_everysec, so that only a scenario that asks for aof_always draws it).
  std::vector<persistence> restart_persistence{persistence::none, persistence::aof_everysec};

  std::int64_t& per_hour_of(fault_kind k) { return per_hour[static_cast<std::size_t>(k)]; }
  std::int64_t per_hour_of(fault_kind k) const { return per_hour[static_cast<std::size_t>(k)]; }

  bool any() const {
    std::int64_t sum = 0;
    for (const std::int64_t r : per_hour) sum += r;
    return sum > 0;
  }
};

struct faults_spec {
  std::vector<fault_spec> schedule;  // file order; the world applies same-instant faults in this order
  std::optional<fault_rates> rates;
  // Not read from a file: the kinds whose faults drawn from rates reached the
  // per-kind limit before rates.until (world::drawn_faults_per_kind_max), so
  // the run is not the one the rates describe and is inconclusive.
  std::vector<fault_kind> draw_limited;
};

// What a case of the report shows (the lab's shapes).
struct observation {
  enum class kind : std::uint8_t { snapshot, response, client_exception, array, object };
  kind k = kind::snapshot;
  std::string target;      // gate name (snapshot) or request id (response, client_exception)
  vtime_ns at_ns = 0;      // snapshot instant
  std::vector<std::pair<std::string, observation>> children;  // object fields or array items

  // Declared so that clang (14, with libstdc++) does not ask whether the
  // still-incomplete pair<string, observation> is implicitly default
  // constructible while it defines this constructor; without it clang
  // rejects every use of the type.
  observation() = default;
};

struct case_spec {
  std::string name;
  observation what;
};

// Every invariant a scenario may name (checks.invariants, expect.violated),
// and the worlds it applies to: the table in sim/check/invariants.hpp.
using check::invariant_names;

struct checks_spec {
  std::vector<std::string> invariants;  // none given: every invariant of the scenario's world; never empty when given
  std::uint64_t max_events = 50'000'000;  // reaching it: inconclusive
  // Wall-clock guard of one run (one variant): reaching it is inconclusive.
  // The only place wall time can change a report, and only by stopping it.
  vtime_ns max_wall_ns = 600 * sim::sec;
  vtime_ns horizon_ns = 24LL * 3600 * sim::sec;  // the run is cut off here
  std::int64_t trace_capacity = 64;
  // The first violation stops the run (else it keeps going to its end, and
  // each invariant reports its windows, time in violation and worst moment).
  bool stop_at_first = false;
  // Every fault has healed by then and the system must be idle at it; at most horizon_ns.
  std::optional<vtime_ns> liveness_horizon_ns;
};

// The verdict of one lease run (a variant's or a protocol's, by name), when the scenario compares several.
struct variant_expect {
  std::string variant = "seed";
  std::string verdict = "pass";
  std::vector<std::string> violated;
};

struct expect_spec {
  std::string verdict = "pass";          // "pass", "violation" or "inconclusive"
  std::vector<std::string> violated;     // with "violation": the invariants expected to break
  std::vector<variant_expect> variants;  // per lease variant, overriding the two above; file order
};

struct scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  std::vector<gate_spec> gates;
  fleet_spec fleet;
  std::vector<request_spec> requests;   // explicit requests, file order
  std::vector<arrival_spec> arrivals;   // generators, file order
  service_spec service;
  faults_spec faults;
  std::vector<case_spec> cases;
  checks_spec checks;
  expect_spec expect;
};

// The world a scenario runs in (check::world_bits): lease when its one gate
// is a lease gate, FIFO otherwise. The loader refuses a mix.
inline unsigned world_of(const scenario& sc) {
  for (const auto& g : sc.gates)
    if (g.kind == gate_kind::lease) return check::world_lease;
  return check::world_fifo;
}

// What the scenario expects of the run of `variant` (a lease variant's name;
// empty for a FIFO run): that variant's expectation when the scenario gives
// one, else the scenario's (sim/check/verdict.hpp judges it).
inline check::expectation expectation_for(const scenario& sc, std::string_view variant) {
  for (const auto& v : sc.expect.variants)
    if (!variant.empty() && variant == v.variant)
      return {v.verdict, v.violated};
  return {sc.expect.verdict, sc.expect.violated};
}

}  // namespace admit::scenario

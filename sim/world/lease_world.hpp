// lease_world: runs a scenario whose gate is the fleet-wide Redis lease
// semaphore, for one protocol variant and one seed.
//
// The simulated system.
//  * A fleet of workers. Each has its own wall clock (virtual time plus an
//    offset, a drift in ppm, and steps injected as faults) that the `seed`
//    variant passes to the acquire script as `now`, and the virtual time as
//    its monotonic clock (acquire timeouts). Workers take work items from one
//    shared queue, as the seed's run_fleet does: acquire a permit through
//    gate::lease_client (poll with backoff until the acquire timeout; fail
//    closed), call the portal with the client's read timeout, release in a
//    "finally" (a failed release is tolerated: expiry is the backstop). An
//    item whose permit could not be had in time is deferred.
//  * A Redis node: the in-memory replica running the variant's C++ scripts
//    atomically, on the server's own clock (epoch-based, with offset and
//    steps), with persistence (none, or AOF every second: a restart keeps
//    what was written before the last whole second), restart, and failover
//    to an asynchronously replicated copy that lags and loses the newest
//    writes.
//  * A network: one-way latency worker<->redis, partitions of a link or a
//    node; a call whose request or reply is lost ends at the client's socket
//    timeout with an error — and may still have run on the server.
//  * A portal with its own true connection cap: a connection above the cap is
//    answered 429 at once; every other one runs for its service time, and
//    keeps running after the client stops waiting.
//  * Faults at given times: crash (the worker dies; nothing of it runs after,
//    not even its release), pause (it stops for a while), partition, clock
//    step, redis restart and failover.
//
// Monitors: members of the set (until removed) <= limit after every script
// (the gate's view); open portal connections <= the portal's cap (the true view); no
// token granted while already a member; at the end every item ended and,
// one lease after the end, no lease is left in the set. Each violation names
// its causes from what the parts recorded (lease/lease_causes.hpp).
#pragma once

#include <optional>
#include <string>
#include <cstdint>
#include <vector>

#include "gate/lease/client_config.hpp"
#include "sim/check/trace_sink.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world {

// Constants of the simulated network and clocks (documented in docs/scenarios.md).
inline constexpr std::int64_t lease_world_epoch_ms = 1'772'236'800'000;  // 2026-02-28T00:00:00Z
inline constexpr std::int64_t redis_latency_ns = 500'000;                 // one way
inline constexpr std::int64_t redis_call_timeout_ns = 1'000'000'000;      // the client's socket timeout
inline constexpr std::int64_t default_portal_read_timeout_ns = 20'000'000'000;

// What a run records besides its verdict. Leaving something out changes no
// event, no invariant, metric or probe: only the record's timeline (series,
// fault windows, lanes) or trace stays empty. `admitsim explore` judges
// seeds by their invariants and metrics alone and runs without either.
struct lease_run_options {
  bool timeline = true;  // run_record::series
  bool trace = true;     // run_record::trace (trace_dropped stays 0 without it)
  // Every trace entry also goes here, with or without `trace` (run_all sets
  // it from its trace_to, and tells it where each run begins and ends).
  check::trace_sink* trace_to = nullptr;
  // A protocol's script may run at most this many Lua steps per call (the
  // engine counts VM instructions by thousands); past it the call fails and
  // the run is inconclusive (docs/limits.md).
  std::uint64_t script_steps_max = 100'000'000;
  // Whether the engines may run the project's own lease scripts by their C++
  // twins (gate/redis/native_twins.hpp). Off only for the tests that hold a
  // built-in protocol file's Lua, run in the VM, to its C++ twin.
  bool native_twins = true;
  // Broken on purpose, for the test that shows the wait_ack design's check can
  // fail: every WAIT answers at once that all the replicas it asked for
  // acknowledged (a client that ignores WAIT's answer behaves the same).
  bool wait_acks_at_once = false;
  // With the timeline: also keep the lanes of the requests whose life meets
  // these spans (timeline::keep_lanes_in; the HTML page's zoom panels). The
  // FIFO world, which always records its timeline, reads this too.
  std::vector<time_span> lanes_around;
  // Broken on purpose, for the test that shows the item-conservation check
  // can fail (tests/world/run_fleet_test.cpp): under fleet.on_acquire_timeout
  // requeue_and_exit the item an acquire gave up on is dropped, not requeued.
  bool mutant_requeue_drops_item = false;
  // Broken on purpose, for the test that shows the generated-scenario
  // property can fail on fair's line (tests/explore/scenario_property_test.cpp):
  // a client whose acquire gives up only stops polling, whatever its variant
  // or protocol says (client.on_give_up "stop"), so a fair waiter that gave up
  // keeps its place in line until queue_timeout.
  bool mutant_give_up_stays_in_line = false;
};

run_record run_lease_scenario(const scenario::scenario& sc, std::uint64_t seed, redis::variant variant,
                              const lease_run_options& options = {});
// The run of a protocol of the scenario's lease gate: its Lua through the
// embedded interpreter (gate/redis/lua_engine.hpp), its client policy.
run_record run_lease_protocol(const scenario::scenario& sc, std::uint64_t seed, const scenario::protocol_ref& proto,
                              const lease_run_options& options = {});

// The client configuration every worker of the run named `run_name` (a variant's or a protocol's name)
// of `sc`'s lease gate is given, as the world gives it; nullopt when the gate has no such run.
std::optional<gate::lease_client_config> lease_client_config_of(const scenario::scenario& sc, const std::string& run_name);

}  // namespace admit::world

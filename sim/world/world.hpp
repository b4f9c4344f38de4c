// world: runs one scenario with one seed on the simulator.
//
// The simulated system. Each gate of the scenario is an async_fifo_gate (the
// shipped adapter over the sans-IO core) on the virtual clock. Every request
// is a client and a server-side handler. The handler is an actor that
// acquires a lease, runs its work at the portal through finish_worker (work
// that cannot be cancelled, so the lease is held until it ends) and answers:
// 200 completed, 429 queue_full, 503 wait_timeout, 500 internal_error (the
// worker failed while starting), or 499 cancelled (the handler was cancelled,
// as when the client disconnects). The client stops reading at its read
// timeout (ReadTimeout), which does not stop the server's work.
//
// Faults (docs/scenarios.md, "Faults in a FIFO scenario"). The gates live in
// one server process, worker:0 (fifo_process.hpp): a crash loses its leases,
// waiters and handlers (clients see connection_reset, later arrivals
// connection_refused until it restarts with empty gates) while its work runs
// on at the portal; a stall holds everything the process would run until it
// ends; a portal partition fails work that would start in it (502
// portal_unreachable); a client-timeout burst sets the read timeout of the
// requests arriving in it.
//
// Monitors see every gate transition (through the core's event sink) and
// every portal start and end, check the invariants at each step, and stop
// the run at the first violation.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/check/trace_sink.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease_world.hpp"
#include "sim/world/own_gate.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world {

// A scenario with FIFO gates: one run (every trace entry also to `trace_to`).
run_record run_scenario(const scenario::scenario& sc, std::uint64_t seed, check::trace_sink* trace_to = nullptr);

// Any scenario: one run for FIFO gates; for a lease gate, one run per
// variant the scenario names, in file order (each record's `variant` says
// which), recording what `lease_options` asks for. A mix of gates no world
// runs is refused by the loader (an assertion here). A run whose drawn faults
// reached the per-kind limit is inconclusive (fault_draw.hpp). With
// `trace_to`, every trace entry of every run goes there too, each run
// between its begin_run (named by its variant or protocol, "" for FIFO) and
// its end_run.
//
// With `own`, every FIFO gate runs that team's own core in place of
// admitsim's (sim/world/own_gate.hpp, docs/own-gate.md), and each record's
// `gate_core` names it. Refused (std::invalid_argument, naming the JSON path)
// for a scenario with a lease gate, and for a gate with a core mutation
// (those break admitsim's core, not the team's).
std::vector<run_record> run_all(const scenario::scenario& sc, std::uint64_t seed,
                                const lease_run_options& lease_options = {}, check::trace_sink* trace_to = nullptr,
                                const own_gate* own = nullptr);

// Why `sc` cannot run with a team's own core (a JSON path and what it
// expected), or "".
std::string own_gate_refusal(const scenario::scenario& sc);

}  // namespace admit::world

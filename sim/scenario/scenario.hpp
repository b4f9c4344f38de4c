// scenario: the typed form of a scenario file (see docs/scenarios.md).
//
// A scenario is data: the gates under test, the workload that hits them, the
// service (portal) behind them, the checks to run and the verdict expected.
// The loader (loader.hpp) turns JSON into this form and rejects anything it
// does not understand with the JSON path of the offending value. Every time
// is integer nanoseconds of virtual time since the run started.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"
#include "sim/kernel/distribution.hpp"
#include "sim/kernel/vtime.hpp"

namespace admit::scenario {

using sim::vtime_ns;

enum class gate_kind : std::uint8_t { fifo };

struct gate_spec {
  std::string name = "gate";
  gate_kind kind = gate_kind::fifo;
  fifo::config fifo;  // max_active, max_waiting, wait_deadline_ns, event_log_capacity, mutation
};

// How a request's server-side work ends, when it does not simply complete.
enum class failure : std::uint8_t {
  none,
  constructor,  // the worker fails while setting up, before any work: HTTP 500
};

struct request_spec {
  std::string id;
  std::string gate;                         // which gate it enters
  vtime_ns at_ns = 0;                       // arrival
  std::optional<vtime_ns> service_ns;       // work duration; default: service.service_time
  std::optional<vtime_ns> cancel_at_ns;     // the server-side handler is cancelled then
  std::optional<vtime_ns> client_timeout_ns;  // the client stops reading after this long
  failure fail = failure::none;
};

struct service_spec {
  std::optional<std::int64_t> portal_cap;  // true concurrency cap; default: the gates' total
  sim::duration_dist service_time = sim::duration_dist::fixed(350 * sim::ms);
  std::optional<vtime_ns> client_timeout_ns;  // default client read timeout
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

inline constexpr const char* invariant_names[] = {
    "gate_inflight_le_cap",    // the gate never grants more than its cap
    "waiting_le_max",          // the queue never holds more than max_waiting
    "portal_inflight_le_cap",  // the portal never sees more concurrent work than its cap
    "fifo_order",              // waiters are promoted in arrival order
    "lease_released_once",     // every granted lease is released exactly once
    "liveness",                // at the end every request has ended and the gates are idle
};

struct checks_spec {
  std::vector<std::string> invariants;  // empty: all
  std::uint64_t max_events = 50'000'000;
  vtime_ns horizon_ns = 24LL * 3600 * sim::sec;  // the run is cut off here
  std::int64_t trace_capacity = 64;
};

struct expect_spec {
  std::string verdict = "pass";          // "pass" or "violation"
  std::vector<std::string> violated;     // with "violation": the invariants expected to break
};

struct scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  std::vector<gate_spec> gates;
  std::vector<request_spec> requests;
  service_spec service;
  std::vector<case_spec> cases;
  checks_spec checks;
  expect_spec expect;
};

}  // namespace admit::scenario

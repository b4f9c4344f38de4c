// fault_kinds: the one table of fault kinds, what each one takes, and where it applies.
//
// Every fault kind a scenario may schedule (faults.schedule) or draw
// (faults.rates) is a row here: its name, the worlds that honour it, the
// nodes it may strike in each of them, the fields it takes and whether the
// rates can draw it. The loader reads a fault by its row and refuses a kind,
// a target or a field that the row does not allow in the scenario's world;
// the rate drawing, the explorer's writer and shrinker read the same row.
// What a fault does is not here: it is the part's it strikes (the apply
// switch of sim/world/fifo/process_faults.cpp for FIFO, of
// sim/world/lease/fault_injector.cpp for lease, which hand it on), and
// each world refuses a kind it does not handle.
//
// A new kind is one row here (appended, so that the kinds' numbers and the
// orders the rates keep do not move), the parse of a field no kind had yet
// (read_fault in loader.cpp, fault_json in sim/explore/scenario_json.cpp),
// its draw when rates can draw it (draw_kind, sim/world/fault_draw.cpp), its
// effect in the worlds it names, and its lines in the fault tables of
// docs/scenarios.md and scenarios/schema.json, which
// tests/scenario/fault_kinds_test.cpp holds to the rows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/check/invariants.hpp"

namespace admit::scenario {

enum class fault_kind : std::uint8_t {
  crash,                 // a worker dies (its leases are never released); restarts after duration, if given
  pause,                 // a worker or redis stops for duration (a GC pause, SIGSTOP)
  partition,             // a link (between) or a node (target) is cut off for duration
  redis_restart,         // redis restarts, keeping what its persistence kept; down for duration
  redis_failover,        // a replica that lags by replication_lag takes over; down for duration
  clock_step,            // a worker's or redis's clock jumps by step
  client_timeout_burst,  // requests arriving in [at, at + duration) get client_timeout
};

// The nodes a fault may name, one bit each: "worker:N", "redis", "portal".
enum node_bits : unsigned {
  node_worker = 1,
  node_redis = 2,
  node_portal = 4,
};

// How a kind names what it strikes in one world.
enum class target_rule : std::uint8_t {
  none,            // the world refuses the kind
  required,        // "target", one of `target`'s nodes
  defaulted,       // "target" optional: `target` is one node, the default
  target_or_link,  // exactly one of "target" (one of `target`'s nodes) or "between" (a link)
};

struct fault_targets {
  target_rule rule = target_rule::none;
  unsigned target = 0;      // node_bits "target" may name
  unsigned link_end_a = 0;  // "between" (target_or_link): a node of link_end_a and one of link_end_b, either order
  unsigned link_end_b = 0;
  // What the loader expects when it refuses a target or a link, where the
  // list of `target`'s nodes would not say why (a world that has the node but
  // cannot cut or stop it). nullptr: that list. Every value not allowed gets
  // this text, a node the scenario does not have included.
  const char* refused = nullptr;
};

enum class fault_duration : std::uint8_t {
  none,           // "duration" is refused (the fault is an instant)
  required,       // 1ns .. 24h
  restart_after,  // optional, 1ns .. 24h; absent: the fault never heals
  downtime,       // optional, 0 .. 24h; absent: 0
};

// The fields beyond at, kind, target, between and duration, one bit each.
// The loader reads them in this order (before duration, except
// client_timeout, which comes after it), which decides which of two bad
// fields a message names.
enum fault_param_bits : unsigned {
  param_persistence = 1,      // optional: "none" (default) or "aof_everysec"
  param_replication_lag = 2,  // optional, 0 .. 24h (default 0)
  param_client_timeout = 4,   // required, 1ns .. 24h
  param_step = 8,             // required, a signed duration, -24h .. +24h, not zero
};

// How faults.rates draws a kind: key nullptr when it cannot.
struct fault_rate {
  const char* key = nullptr;  // its faults.rates key, "<name>_per_hour"
  // The position of its key among the rates: the order files, reports and
  // the explorer's swarm draws keep (a new kind takes the next one).
  std::uint8_t file_order = 0;
  // The position of its Poisson process in a draw, which orders the faults of
  // two kinds that strike at one instant (a new kind takes the next one).
  std::uint8_t draw_order = 0;
};

struct fault_kind_info {
  fault_kind kind;
  const char* name;
  unsigned worlds;  // check::world_bits
  fault_targets fifo;
  fault_targets lease;
  fault_duration duration;
  unsigned params;  // fault_param_bits
  fault_rate rate;
  // Why a world it does not name refuses it, in faults.schedule ("... is
  // refused: WHY") and in faults.rates ("WHY; expected 0 or no key").
  // nullptr when it names every world (or rates cannot draw it).
  const char* refused_why;
  const char* rate_refused_why;
};

inline constexpr fault_kind_info fault_kind_table[] = {
    {.kind = fault_kind::crash,
     .name = "crash",
     .worlds = check::world_fifo | check::world_lease,
     .fifo = {.rule = target_rule::required,
              .target = node_worker,
              .refused = "for a FIFO scenario, \"worker:0\" (the server process holding the gates)"},
     .lease = {.rule = target_rule::required, .target = node_worker},
     .duration = fault_duration::restart_after,
     .params = 0,
     .rate = {.key = "crash_per_hour", .file_order = 0, .draw_order = 0},
     .refused_why = nullptr,
     .rate_refused_why = nullptr},
    {.kind = fault_kind::pause,
     .name = "pause",
     .worlds = check::world_fifo | check::world_lease,
     // The portal is outside the process: a stall of it is not modelled.
     .fifo = {.rule = target_rule::required,
              .target = node_worker,
              .refused = "for a FIFO scenario, \"worker:0\" (the server process; a pause is its event-loop stall)"},
     .lease = {.rule = target_rule::required, .target = node_worker | node_redis},
     .duration = fault_duration::required,
     .params = 0,
     .rate = {.key = "pause_per_hour", .file_order = 2, .draw_order = 1},
     .refused_why = nullptr,
     .rate_refused_why = nullptr},
    {.kind = fault_kind::partition,
     .name = "partition",
     .worlds = check::world_fifo | check::world_lease,
     // Only the link from the process to the portal can be cut: a process
     // cut off from its clients is a crash or a stall, which have kinds of their own.
     .fifo = {.rule = target_rule::target_or_link,
              .target = node_portal,
              .link_end_a = node_worker,
              .link_end_b = node_portal,
              .refused = "for a FIFO scenario, \"portal\" (as \"target\") or [\"worker:0\", \"portal\"] (as "
                         "\"between\"): the process's link to the portal"},
     // The lease world's network is the links between the workers and Redis: a cut of the
     // portal, or of a link between two workers, would change nothing, so it is refused.
     .lease = {.rule = target_rule::target_or_link,
               .target = node_worker | node_redis,
               .link_end_a = node_worker,
               .link_end_b = node_redis,
               .refused = "for a lease scenario, a worker or \"redis\" (as \"target\"), or a worker and \"redis\" (as "
                          "\"between\"): the lease world's network is the links between the workers and Redis"},
     .duration = fault_duration::required,
     .params = 0,
     .rate = {.key = "partition_per_hour", .file_order = 1, .draw_order = 2},
     .refused_why = nullptr,
     .rate_refused_why = nullptr},
    {.kind = fault_kind::redis_restart,
     .name = "redis_restart",
     .worlds = check::world_lease,
     .fifo = {},
     .lease = {.rule = target_rule::defaulted, .target = node_redis},
     .duration = fault_duration::downtime,
     .params = param_persistence,
     .rate = {.key = "redis_restart_per_hour", .file_order = 4, .draw_order = 4},
     .refused_why = "Redis faults need a lease gate",
     .rate_refused_why = "Redis faults need a lease gate"},
    {.kind = fault_kind::redis_failover,
     .name = "redis_failover",
     .worlds = check::world_lease,
     .fifo = {},
     .lease = {.rule = target_rule::defaulted, .target = node_redis},
     .duration = fault_duration::downtime,
     .params = param_replication_lag,
     .rate = {.key = "redis_failover_per_hour", .file_order = 5, .draw_order = 5},
     .refused_why = "Redis faults need a lease gate",
     .rate_refused_why = "Redis faults need a lease gate"},
    {.kind = fault_kind::clock_step,
     .name = "clock_step",
     .worlds = check::world_lease,
     .fifo = {},
     .lease = {.rule = target_rule::required, .target = node_worker | node_redis},
     .duration = fault_duration::none,
     .params = param_step,
     .rate = {.key = "clock_step_per_hour", .file_order = 3, .draw_order = 3},
     .refused_why = "the FIFO gate reads no wall clock",
     .rate_refused_why = "a FIFO scenario has no clock to step (the FIFO gate reads no wall clock)"},
    {.kind = fault_kind::client_timeout_burst,
     .name = "client_timeout_burst",
     .worlds = check::world_fifo | check::world_lease,
     .fifo = {.rule = target_rule::defaulted, .target = node_portal},
     .lease = {.rule = target_rule::defaulted, .target = node_portal},
     .duration = fault_duration::required,
     .params = param_client_timeout,
     .rate = {},
     .refused_why = nullptr,
     .rate_refused_why = nullptr},
};
inline constexpr std::size_t fault_kind_count = std::size(fault_kind_table);

inline constexpr std::array<const char*, fault_kind_count> fault_kind_names = [] {
  std::array<const char*, fault_kind_count> out{};
  for (std::size_t i = 0; i < fault_kind_count; ++i) out[i] = fault_kind_table[i].name;
  return out;
}();

constexpr const fault_kind_info& fault_row(fault_kind k) { return fault_kind_table[static_cast<std::size_t>(k)]; }

constexpr const fault_targets& targets_in(const fault_kind_info& row, unsigned world) {
  return world == check::world_lease ? row.lease : row.fifo;
}

constexpr bool applies(const fault_kind_info& row, unsigned world) { return (row.worlds & world) != 0; }
constexpr bool drawable(const fault_kind_info& row) { return row.rate.key != nullptr; }

inline constexpr std::size_t fault_rate_count = [] {
  std::size_t n = 0;
  for (const auto& row : fault_kind_table) n += drawable(row) ? 1 : 0;
  return n;
}();

// The kinds rates can draw, by file_order and by draw_order.
inline constexpr std::array<fault_kind, fault_rate_count> fault_rates_file_order = [] {
  std::array<fault_kind, fault_rate_count> out{};
  for (const auto& row : fault_kind_table)
    if (drawable(row)) out[row.rate.file_order] = row.kind;
  return out;
}();
inline constexpr std::array<fault_kind, fault_rate_count> fault_rates_draw_order = [] {
  std::array<fault_kind, fault_rate_count> out{};
  for (const auto& row : fault_kind_table)
    if (drawable(row)) out[row.rate.draw_order] = row.kind;
  return out;
}();

// The row of `name`, or nullptr.
constexpr const fault_kind_info* find_fault_kind(std::string_view name) {
  for (const auto& row : fault_kind_table)
    if (name == row.name) return &row;
  return nullptr;
}

namespace fault_table_detail {

constexpr bool one_bit(unsigned x) { return x != 0 && (x & (x - 1)) == 0; }

constexpr bool targets_well_formed(const fault_targets& t, bool named) {
  if (!named) return t.rule == target_rule::none && t.target == 0 && t.link_end_a == 0 && t.link_end_b == 0;
  if (t.rule == target_rule::none || t.target == 0) return false;
  if ((t.target & ~(node_worker | node_redis | node_portal)) != 0) return false;
  // A default is one node that needs no index.
  if (t.rule == target_rule::defaulted && !(one_bit(t.target) && t.target != node_worker)) return false;
  // A link joins two distinct kinds of node (a worker and redis, a worker and the portal), and
  // its refusal always says which (the list of single nodes would not).
  const bool link = t.rule == target_rule::target_or_link;
  if (link != (t.link_end_a != 0)) return false;
  if (link != (t.link_end_b != 0)) return false;
  if (link && (t.refused == nullptr || (t.link_end_a & t.link_end_b) != 0)) return false;
  return true;
}

// Every row: its own kind's place, a name no other row has, at least one
// world and only known ones, targets exactly in the worlds it names, a
// reason for each world it does not name, and rate orders that are each a
// permutation of the drawable kinds.
constexpr bool table_well_formed() {
  constexpr unsigned all_worlds = check::world_fifo | check::world_lease;
  bool file_seen[fault_kind_count] = {};
  bool draw_seen[fault_kind_count] = {};
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    const fault_kind_info& row = fault_kind_table[i];
    if (static_cast<std::size_t>(row.kind) != i) return false;
    if (row.name == nullptr) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (std::string_view(row.name) == fault_kind_table[j].name) return false;
    if (row.worlds == 0 || (row.worlds & ~all_worlds) != 0) return false;
    if (!targets_well_formed(row.fifo, applies(row, check::world_fifo))) return false;
    if (!targets_well_formed(row.lease, applies(row, check::world_lease))) return false;
    if ((row.params & ~(param_persistence | param_replication_lag | param_client_timeout | param_step)) != 0)
      return false;
    const bool everywhere = row.worlds == all_worlds;
    if (everywhere != (row.refused_why == nullptr)) return false;
    if ((everywhere || !drawable(row)) != (row.rate_refused_why == nullptr)) return false;
    if (drawable(row)) {
      if (row.rate.file_order >= fault_rate_count || file_seen[row.rate.file_order]) return false;
      if (row.rate.draw_order >= fault_rate_count || draw_seen[row.rate.draw_order]) return false;
      file_seen[row.rate.file_order] = true;
      draw_seen[row.rate.draw_order] = true;
      // The key is the name with "_per_hour": what docs and files spell.
      const std::string_view key = row.rate.key;
      const std::string_view name = row.name;
      if (key.size() != name.size() + 9 || key.substr(0, name.size()) != name || key.substr(name.size()) != "_per_hour")
        return false;
    }
  }
  return true;
}

}  // namespace fault_table_detail

static_assert(fault_table_detail::table_well_formed(),
              "fault_kind_table: each row in its kind's place, named, in at least one world, with targets exactly "
              "in its worlds, reasons for the others, and distinct rate orders");

}  // namespace admit::scenario

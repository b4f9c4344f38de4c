// sweep: one scenario parameter varied over a grid of values, each value run
// over a seed budget by the explorer (the same search `admitsim explore`
// runs), and, for a parameter whose violation rate is monotone over the grid,
// the boundary between safe and unsafe bisected to a tolerance
// (docs/sweep.md).
//
// Model. A value is `unsafe` when at least one of its seeds broke an
// invariant (any invariant of any run of the seed, whatever the scenario
// expects: a sweep measures, it does not judge against `expect`), `safe` when
// every seed ran to its end without breaking one, and `unknown` otherwise (a
// seed cut short, inconclusive, or ended in an error): an unknown value is
// never counted as safe. Over the grid in increasing order, the known values
// (safe or unsafe) must change class exactly once for a boundary to exist;
// none is claimed otherwise. Bisection halves the bracket between the last
// safe and the first unsafe value (or the reverse) until it is at most the
// tolerance wide, and stops at an unknown midpoint. Values run one after
// another; the seeds of each run on `jobs` threads and are counted in seed
// order, so the result never depends on `jobs`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/evidence.hpp"
#include "sim/explore/scenario_patch.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::explore {

// The most values a grid may hold, and the most bisection steps (docs/limits.md).
inline constexpr std::size_t sweep_values_max = 1'000;
inline constexpr std::size_t sweep_bisect_steps_max = 64;

enum class value_class { safe, unsafe, unknown };
const char* to_string(value_class c);

// What the seeds of one value found.
struct value_result {
  param_value value;
  std::uint64_t seeds_run = 0;
  std::uint64_t violating = 0;     // seeds with a broken invariant
  std::uint64_t inconclusive = 0;  // seeds without one, with a run cut short
  std::uint64_t errors = 0;        // seeds whose run threw
  std::int64_t portal_inflight_max = 0;  // served at once, over every run
  std::int64_t portal_cap = 0;
  std::int64_t worst_overshoot = 0;       // the furthest a level invariant went above its bound
  std::string worst_invariant;            // which one (the first by name at that height)
  std::map<std::string, std::uint64_t> broken;  // invariant -> seeds that broke it
  std::optional<std::uint64_t> first_violating_seed;
  reports::evidence ev;  // what the value's class rests on (reports/evidence.hpp)
  value_class cls() const;
};

// What a sweep was asked for, read and checked.
struct sweep_request {
  nlohmann::ordered_json doc;  // the scenario document, its protocol files inline
  param_target target;
  std::vector<param_value> grid;  // increasing
  std::uint64_t seeds = 20;
  bool bisect = false;
  param_value tolerance;
  unsigned jobs = 1;
  // What the boundary's words add about the scenario ("lease 15s, renew every 12s"), or "".
  std::string context;
  // Polled between values and before each seed: true stops the sweep.
  std::function<bool()> stop;
  // Called after each value ran (for a line on stderr).
  std::function<void(const value_result&, bool bisecting)> on_value;
};

enum class boundary_kind { found, bracketed, none_all_safe, none_all_unsafe, not_monotone, unknown };
const char* to_string(boundary_kind k);

struct sweep_result {
  std::vector<value_result> grid;
  std::vector<value_result> bisect;  // in the order they ran
  boundary_kind kind = boundary_kind::unknown;
  bool increasing = true;          // unsafe above the boundary (else below)
  std::optional<param_value> safe, unsafe;  // the bracket: the nearest safe and unsafe values
  std::string note;                // why bisection stopped early, or what blocks a claim
  bool stopped = false;
};

// The scenario of `doc` with `v` at the pointer; throws scenario::scenario_error (the loader's).
scenario::scenario load_patched(const nlohmann::ordered_json& doc, const param_target& t, const param_value& v);

// The default tolerance: a sixteenth of the smallest gap of the grid (at least 1 unit; a number: at
// least 1e-9 of the range).
param_value default_tolerance(const param_target& t, const std::vector<param_value>& grid);

// The grid from `from` to `to` in `steps` values, evenly spaced (integers rounded down, duplicates
// dropped).
std::vector<param_value> even_grid(const param_target& t, const param_value& from, const param_value& to,
                                   std::uint64_t steps);

// How finely a sweep's durations are written for people (value_text's resolution): the grid's
// smallest step, and with a bisection half the tolerance (a midpoint lies at least that far from
// the ends of its bracket), so that the values a sweep runs read apart. 0 for integers and numbers.
std::int64_t text_resolution_ns(const param_target& t, const std::vector<param_value>& grid,
                                 const std::optional<param_value>& tolerance);
std::int64_t text_resolution_ns(const sweep_request& req);

// The boundary the grid `r.grid` shows (kind, direction, bracket, note), as run_sweep judges it
// before it bisects; the note writes durations at `resolution_ns` (text_resolution_ns).
void judge_grid(const param_target& t, sweep_result& r, std::int64_t resolution_ns = 0);

// Runs it. Throws scenario::scenario_error when a bisection midpoint does not load (a grid
// value that does not load is the caller's to refuse before: load_patched).
sweep_result run_sweep(const sweep_request& req);

// "lease 15s, renew every 12s" for a scenario whose one lease gate has one run, else "".
std::string lease_context(const scenario::scenario& sc);

// The sweep's words: "safe at and below 2.999s of /fleet/clocks/0/offset (...)".
std::string boundary_words(const sweep_request& req, const sweep_result& r);

// The JSON document docs/sweep.md describes (without "scenario", which the caller adds).
nlohmann::ordered_json sweep_json(const sweep_request& req, const sweep_result& r);

}  // namespace admit::explore

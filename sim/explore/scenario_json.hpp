// scenario_json: the typed scenario written back as a scenario file.
//
// The inverse of the loader (sim/scenario/loader.hpp): for every scenario s
// the loader accepts, load(to_json(s)) describes the same runs as s, and
// to_json(load(to_json(s))) == to_json(s) (tests/explore checks both on the
// whole catalogue and on every example of docs/scenarios.md). Defaults are
// written out explicitly, so a file written here says everything a run
// uses. Durations are exact: whole units where they fit ("350ms", "2m"),
// else a decimal fraction of the largest unit below them ("1.234567891s"),
// so a shrunk scenario with drawn times stays readable.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"

namespace admit::explore {

nlohmann::ordered_json scenario_to_json(const scenario::scenario& sc);

// The file's bytes: 2-space indentation and a final newline.
std::string render_scenario(const scenario::scenario& sc);

// A duration as scenario files write it, exact and short ("1.5s", "350ms", "17ns").
std::string duration_text(sim::vtime_ns ns);
// A signed duration: "+2s", "-250ms".
std::string signed_duration_text(sim::vtime_ns ns);

}  // namespace admit::explore

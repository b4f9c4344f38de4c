// sweep_html: the HTML page of an `admitsim sweep` (docs/sweep.md), for people.
//
// One self-contained page (inline CSS and SVG, nothing from the network)
// drawn from the sweep's JSON document alone, so that the page and the JSON
// never disagree: the boundary in words, a plot of the violation rate against
// the value (grid values as circles, bisection steps as diamonds, a value
// whose seeds were inconclusive as a hollow square at its rate; the safe and
// unsafe ends of the boundary shaded and marked), and a table per value.
// Every string from the scenario or the command line is escaped. Coordinates
// are integer tenths of a pixel; nothing reads a clock: the same document
// gives the same bytes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace admit::reports {

std::string render_sweep_html(const nlohmann::ordered_json& sweep);

}  // namespace admit::reports

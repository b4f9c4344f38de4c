// one_variant: a scenario's runs one at a time, for the searches that walk one
// run's alternatives (exhaustive.hpp's same-instant orders, placement.hpp's
// fault placements).
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace admit::explore {

// The scenario restricted to one lease variant or protocol (FIFO, ""): as it
// is), its rates drawn with its own seed, as admitsim run runs it. Throws
// std::invalid_argument for a variant the scenario does not have.
scenario::scenario one_variant(const scenario::scenario& base, const std::string& variant);

// The names of its runs, in run order: {""} for a FIFO scenario.
std::vector<std::string> variants_of(const scenario::scenario& sc);

}  // namespace admit::explore

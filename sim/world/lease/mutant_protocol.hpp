// mutant_protocol: the built-in variants with their acquire broken on
// purpose, for the mutants that live in the script (docs/mutants.md):
//   no_reaping      the acquire admits below the limit but never removes an
//                   expired permit;
//   check_then_add  the acquire only counts (after reaping) and answers 1
//                   below the limit; the add is the client's second round
//                   trip, which the world's network makes (network.hpp).
// The broken acquire replaces the variant's, whatever the variant: one
// sorted set, each permit scored by its acquisition time, on the caller's
// clock for `seed` (the variant that passes {now_ms}) and on the server's
// (TIME) for every other. The variant's release and renew stay.
#pragma once

#include "sim/scenario/scenario.hpp"

namespace admit::world::lease {

// The variant's protocol with `mut`'s acquire; `mut` is no_reaping or check_then_add.
[[nodiscard]] scenario::protocol_ref mutant_protocol(redis::variant v, scenario::world_mutation mut);

// Whether `mut` is one of the broken acquires above.
[[nodiscard]] constexpr bool breaks_acquire(scenario::world_mutation mut) noexcept {
  return mut == scenario::world_mutation::no_reaping || mut == scenario::world_mutation::check_then_add;
}

}  // namespace admit::world::lease

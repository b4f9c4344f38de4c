// builtin_protocols: the built-in variants as protocols. A scenario's
// "variant" names one of the protocol files of gate/redis/protocols, which the
// binary carries compiled in with the Lua files they name, so that every lease
// run, a built-in variant's included, runs a protocol: its Lua through the
// engine (and the engine's native twin of it, chosen by the script's SHA).
#pragma once

#include "sim/scenario/scenario.hpp"

namespace admit::scenario {

// The variant's protocol, read from the compiled-in files once (the first
// call, from any thread) and kept for the life of the program.
[[nodiscard]] const protocol_ref& builtin_protocol(redis::variant v);

}  // namespace admit::scenario

// Virtual time: int64 nanoseconds since the start of a run.
//
// Every clock in admitsim (the scheduler's, a worker's wall clock, the Redis
// server's clock) is expressed in this one unit, so arithmetic never mixes
// scales. Helpers keep literals readable: `350 * ms`.
#pragma once

#include <cstdint>

namespace admit::sim {

using vtime_ns = std::int64_t;

inline constexpr vtime_ns ns = 1;
inline constexpr vtime_ns us = 1'000;
inline constexpr vtime_ns ms = 1'000'000;
inline constexpr vtime_ns sec = 1'000'000'000;
inline constexpr vtime_ns minute = 60 * sec;
inline constexpr vtime_ns vtime_max = INT64_MAX;

}  // namespace admit::sim

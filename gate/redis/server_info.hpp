// admit::redis::server_facts and INFO: what a Redis process knows of itself.
//
// The replica models one database's keyspace; the process that serves it has
// facts of its own that a script can read through INFO: when it started (the
// server clock then, in microseconds since the Unix epoch) and its run id (a
// 40-hex-digit name that changes at every start). A restart gives a new
// process, whatever the persistence kept of the keyspace, and a failover
// puts the replica's process in front, so a script can tell either from
// neither by the run id: that is what the `process_grace` design
// (scenarios/designs/process_grace/) reads.
//
// INFO answers only its `server` section, with Redis 7.0's line format
// ("name:value\r\n" under "# Server"), in Redis's order, and of its fields
// these: redis_version, redis_mode, run_id, tcp_port, server_time_usec,
// uptime_in_seconds, uptime_in_days. uptime_in_seconds is, as in Redis, the
// difference of two whole-second readings of the server clock (now and the
// start): a process up for 0.2 s may report 1, one up for 1.9 s reports 1 or 2.
// Any other section (or none) is an error starting "ERR admitsim replica:".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gate/redis/reply.hpp"

namespace admit::redis {

struct server_facts {
  std::string run_id;              // 40 lower-case hex digits
  std::int64_t started_at_us = 0;  // the server clock when the process started
};

// A deterministic run id for the `process`-th process of node `node`.
[[nodiscard]] std::string make_run_id(std::size_t node, std::uint64_t process);

// INFO's reply for argv (argv[0] is "INFO" in any case) at the server clock
// `now_us`; `facts` null: an error (the engine runs outside a world).
[[nodiscard]] reply info_reply(std::span<const std::string_view> argv, const server_facts* facts,
                               std::int64_t now_us);

}  // namespace admit::redis

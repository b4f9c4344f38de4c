// Goal: admitsim::gate alone builds and links a service's use of the gate code.
// Method: a FIFO gate admits one request and queues the next; the Lua engine
// runs a script against the replica. Exit 0 when every step gives what it must.
#include <cstdio>
#include <string>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"
#include "gate/redis/lua_engine.hpp"
#include "gate/redis/replica.hpp"

namespace {
int failed(const char* what) {
  std::fprintf(stderr, "gate_only: %s\n", what);
  return 1;
}
}  // namespace

int main() {
  admit::fifo::config cfg;
  cfg.max_active = 1;
  cfg.max_waiting = 1;
  admit::fifo::fifo_gate gate(cfg);
  if (gate.acquire(1, 0).outcome != admit::fifo::acquire_outcome::admitted) return failed("first acquire not admitted");
  if (gate.acquire(2, 1).outcome != admit::fifo::acquire_outcome::queued) return failed("second acquire not queued");
  const admit::fifo::release_result r = gate.release(2);
  if (!r.ok || r.promoted != admit::fifo::ticket_id{2}) return failed("release did not promote the waiter");

  admit::redis::replica data;
  admit::redis::script_engine lua(data);
  const std::vector<std::string> keys{"k"};
  const std::vector<std::string> args{"41"};
  const admit::redis::reply set =
      lua.eval("return redis.call('INCRBY', KEYS[1], ARGV[1] + 1)", keys, args, 0);
  if (set.type != admit::redis::reply::kind::integer || set.integer != 42) return failed("the Lua script did not give 42");
  std::printf("gate_only: fifo gate and Lua engine ok\n");
  return 0;
}

#include "gate/redis/server_info.hpp"

#include <string>

#include "gate/redis/ascii_case.hpp"
#include "gate/redis/sha1.hpp"

namespace admit::redis {

namespace {
// Whole seconds of a clock in microseconds, rounded down (as time(NULL) reads it).
std::int64_t whole_seconds(std::int64_t us) { return us >= 0 ? us / 1'000'000 : -((-us + 999'999) / 1'000'000); }

}  // namespace

std::string make_run_id(std::size_t node, std::uint64_t process) {
  return sha1_hex("admitsim redis node " + std::to_string(node) + " process " + std::to_string(process));
}

reply info_reply(std::span<const std::string_view> argv, const server_facts* facts, std::int64_t now_us) {
  if (argv.size() != 2 || !equals_ci(argv[1], "server"))
    return reply::error("ERR admitsim replica: INFO models only its server section (INFO server)");
  if (facts == nullptr) return reply::error("ERR admitsim replica: INFO server needs a server process (none is modelled here)");
  const std::int64_t uptime_s = whole_seconds(now_us) - whole_seconds(facts->started_at_us);
  std::string text = "# Server\r\n";
  text += "redis_version:7.0.15\r\n";
  text += "redis_mode:standalone\r\n";
  text += "run_id:" + facts->run_id + "\r\n";
  text += "tcp_port:6379\r\n";
  text += "server_time_usec:" + std::to_string(now_us) + "\r\n";
  text += "uptime_in_seconds:" + std::to_string(uptime_s) + "\r\n";
  text += "uptime_in_days:" + std::to_string(uptime_s / 86'400) + "\r\n";
  return reply::bulk(std::move(text));
}

}  // namespace admit::redis

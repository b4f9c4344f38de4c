#include "gate/redis/server_info.hpp"

#include <string>

#include "gate/redis/sha1.hpp"

namespace admit::redis {

namespace {
// Whole seconds of a clock in microseconds, rounded down (as time(NULL) reads it).
std::int64_t whole_seconds(std::int64_t us) { return us >= 0 ? us / 1'000'000 : -((-us + 999'999) / 1'000'000); }

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}
}  // namespace

std::string make_run_id(std::size_t node, std::uint64_t process) {
  return sha1_hex("admitsim redis node " + std::to_string(node) + " process " + std::to_string(process));
}

reply info_reply(std::span<const std::string_view> argv, const server_facts* facts, std::int64_t now_us) {
  if (argv.size() != 2 || !equals_ignoring_case(argv[1], "server"))
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

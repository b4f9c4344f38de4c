#include "sim/world/fifo/process_core.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/admit_assert.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"

namespace admit::world::fifo_world {

namespace {

using json = nlohmann::ordered_json;

// This thread's idle children, each with the command and folder it runs.
struct idle_child {
  std::vector<std::string> command;
  std::string cwd;
  std::unique_ptr<proc::child_process> child;
};
struct child_pool {
  std::vector<idle_child> idle;  // oldest first
};
child_pool& pool() {
  thread_local child_pool p;
  return p;
}

// A thread that talks to children is pinned, once, to one CPU of those the
// process may use (round robin across threads), and its children inherit
// the pin: every message is a round trip between the two, and on one CPU it
// costs a context switch, where across two each wake-up crosses CPUs
// (docs/performance.md, "Process gates": about half the CPU per request).
// Only where work runs changes, never what it computes.
void pin_this_thread_once() {
  thread_local bool pinned = false;
  if (pinned) return;
  pinned = true;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int count = CPU_COUNT(&allowed);
  if (count <= 1) return;
  static std::atomic<unsigned> next{0};
  int want = static_cast<int>(next.fetch_add(1, std::memory_order_relaxed) % static_cast<unsigned>(count));
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (want-- != 0) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
    return;
  }
}

std::unique_ptr<proc::child_process> take_child(const scenario::process_spec& spec) {
  pin_this_thread_once();
  std::vector<idle_child>& idle = pool().idle;
  for (auto it = idle.rbegin(); it != idle.rend(); ++it) {
    if (it->command == spec.command && it->cwd == spec.cwd) {
      std::unique_ptr<proc::child_process> c = std::move(it->child);
      idle.erase(std::next(it).base());
      return c;
    }
  }
  return proc::child_process::start(spec.command, spec.cwd);
}

void give_back(const scenario::process_spec& spec, std::unique_ptr<proc::child_process> c) {
  ADMIT_ASSERT(c != nullptr && c->failure() == nullptr, "only a healthy child goes back to the pool");
  std::vector<idle_child>& idle = pool().idle;
  if (idle.size() >= process_pool_max) idle.erase(idle.begin());  // the oldest is killed
  idle.push_back(idle_child{spec.command, spec.cwd, std::move(c)});
}

std::string shorten(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max - 3)) + "...";
}

// The answer's fields, checked: exactly `allowed` keys, each present.
bool has_exactly(const json& a, std::initializer_list<const char*> keys) {
  if (!a.is_object() || a.size() != keys.size()) return false;
  for (const char* k : keys)
    if (!a.contains(k)) return false;
  return true;
}

// A ticket or null: nullopt when neither (then `ok` is false).
std::optional<fifo::ticket_id> ticket_or_null(const json& v, bool& ok) {
  ok = true;
  if (v.is_null()) return std::nullopt;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() >= 1) return v.get<std::uint64_t>();
  ok = false;
  return std::nullopt;
}

// A waiter the child armed no deadline for: its expire comes after any horizon.
constexpr std::int64_t never_ns = std::numeric_limits<std::int64_t>::max() / 2;

}  // namespace

std::string process_core::name_of(const scenario::process_spec& spec) {
  ADMIT_ASSERT(!spec.command.empty(), "a process gate names a command");
  if (!spec.name.empty()) return "process:" + spec.name;
  // The last word that names a file (a '.' or a '/' in it, no leading '-'): the gate's
  // source more often than the interpreter; else the program.
  std::string word = spec.command.front();
  for (std::size_t i = spec.command.size(); i-- > 1;) {
    const std::string& w = spec.command[i];
    if (!w.empty() && w.front() != '-' && w.find_first_of("./") != std::string::npos) {
      word = w;
      break;
    }
  }
  if (const auto slash = word.find_last_of('/'); slash != std::string::npos && slash + 1 < word.size())
    word = word.substr(slash + 1);
  std::string name = "process:";
  for (char ch : word) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                    ch == '.' || ch == ':' || ch == '-';
    name += ok ? ch : '_';
    if (name.size() == 64) break;
  }
  return name;
}

process_core::process_core(const scenario::process_spec& spec, const fifo::config& cfg, std::string_view gate,
                           std::uint64_t seed)
    : spec_(spec), child_(take_child(spec)) {
  ADMIT_ASSERT(child_ != nullptr, "a child, started or failed");
  if (const proc::child_failure* f = child_->failure()) {
    fail(f->kind, f->detail);
    return;
  }
  json start = json::object();
  start["type"] = "start";
  start["protocol"] = 1;
  start["gate"] = std::string(gate);
  start["seed"] = seed;
  start["config"] = json{{"max_active", cfg.max_active},
                         {"max_waiting", cfg.max_waiting},
                         {"wait_deadline_ns", cfg.wait_deadline_ns}};
  start["now"] = 0;
  const std::optional<std::string> a = exchange(start.dump(), 0);
  if (!a) return;
  if (*a != R"({"ok":true})") {
    // Parsed to be sure: {"ok": true} with spaces is as good.
    json doc;
    try {
      doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
    } catch (const std::exception&) {
    }
    if (!(has_exactly(doc, {"ok"}) && doc["ok"] == true))
      fail("process_protocol", "the child " + child_->command_text() + " answered `" + scenario::printable(shorten(*a, 200)) + "` to " +
                                   shorten(start.dump(), 300) + ", where {\"ok\":true} was expected");
  }
}

process_core::~process_core() {
  if (failure_ || child_ == nullptr || child_->failure() != nullptr) return;
  // The run is over: a child that says so goes back to the pool for the next run.
  const std::optional<std::string> a =
      child_->exchange(R"({"type":"stop","now":)" + std::to_string(last_now_ns_) + "}", spec_.message_timeout_ns);
  if (!a) return;
  json doc;
  try {
    doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
  } catch (const std::exception&) {
    return;
  }
  if (has_exactly(doc, {"ok"}) && doc["ok"] == true) give_back(spec_, std::move(child_));
}

void process_core::fail(std::string kind, std::string detail) {
  if (failure_) return;
  std::string tail = child_ ? child_->stderr_tail() : std::string();
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  if (!tail.empty()) {
    // Its last eight lines at most, joined by " | ".
    std::size_t from = tail.size();
    for (int lines = 0; lines < 8 && from > 0; ++lines) {
      const std::size_t nl = tail.rfind('\n', from - 1);
      from = nl == std::string::npos ? 0 : nl;
    }
    std::string joined;
    for (char ch : std::string_view(tail).substr(from)) {
      if (ch == '\r') continue;
      if (ch == '\n') {
        if (!joined.empty()) joined += " | ";
        continue;
      }
      joined += ch;
    }
    detail += "; its last stderr lines: " + scenario::printable(joined);
  } else {
    detail += "; it wrote nothing on stderr";
  }
  failure_ = fifo::core_failure{std::move(kind), std::move(detail)};
}

std::optional<std::string> process_core::exchange(const std::string& request, std::int64_t now_ns) {
  if (failure_) return std::nullopt;
  last_now_ns_ = std::max(last_now_ns_, now_ns);
  ADMIT_ASSERT(child_ != nullptr, "a core that has not failed has its child");
  std::optional<std::string> a = child_->exchange(request, spec_.message_timeout_ns);
  if (!a) {
    const proc::child_failure* f = child_->failure();
    ADMIT_ASSERT(f != nullptr, "an exchange without an answer failed");
    fail(f->kind, f->detail + ", at the request " + shorten(request, 300));
    return std::nullopt;
  }
  // An {"error": "..."} answer: the child's own way to say it cannot go on.
  if (a->find("\"error\"") != std::string::npos) {
    json doc;
    try {
      doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
    } catch (const std::exception&) {
      return a;  // judged by the caller, which refuses it
    }
    if (has_exactly(doc, {"error"}) && doc["error"].is_string()) {
      fail("process_error", "the child " + child_->command_text() + " answered the request " + shorten(request, 300) +
                                " with the error \"" + scenario::printable(shorten(doc["error"].get<std::string>(), 1000)) +
                                "\"");
      return std::nullopt;
    }
  }
  return a;
}

fifo::acquire_result process_core::acquire(fifo::ticket_id t, std::int64_t now_ns) {
  const std::string request =
      R"({"type":"acquire","ticket":)" + std::to_string(t) + R"(,"now":)" + std::to_string(now_ns) + "}";
  const std::optional<std::string> a = exchange(request, now_ns);
  if (!a) return {fifo::acquire_outcome::queue_full, 0};
  if (*a == R"({"result":"admitted"})") return {fifo::acquire_outcome::admitted, 0};
  if (*a == R"({"result":"queue_full"})") return {fifo::acquire_outcome::queue_full, 0};
  json doc;
  try {
    doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
  } catch (const std::exception&) {
  }
  if (has_exactly(doc, {"result"}) && doc["result"] == "admitted") return {fifo::acquire_outcome::admitted, 0};
  if (has_exactly(doc, {"result"}) && doc["result"] == "queue_full") return {fifo::acquire_outcome::queue_full, 0};
  if (has_exactly(doc, {"result", "deadline"}) && doc["result"] == "queued") {
    const json& d = doc["deadline"];
    if (d.is_null()) return {fifo::acquire_outcome::queued, never_ns};
    if (d.is_number_integer() && d.get<std::int64_t>() >= now_ns) return {fifo::acquire_outcome::queued, d.get<std::int64_t>()};
  }
  fail("process_protocol", "the child " + child_->command_text() + " answered `" + scenario::printable(shorten(*a, 200)) + "` to " + request +
                               ", where {\"result\":\"admitted\"}, {\"result\":\"queue_full\"} or "
                               "{\"result\":\"queued\",\"deadline\":D} (D an integer, not before now, or null) was expected");
  return {fifo::acquire_outcome::queue_full, 0};
}

fifo::release_result process_core::release(std::int64_t now_ns) {
  const std::string request = R"({"type":"release","now":)" + std::to_string(now_ns) + "}";
  const std::optional<std::string> a = exchange(request, now_ns);
  if (!a) return {false, std::nullopt};
  if (*a == R"({"ok":true,"promoted":null})") return {true, std::nullopt};
  json doc;
  try {
    doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
  } catch (const std::exception&) {
  }
  if (has_exactly(doc, {"ok", "promoted"}) && doc["ok"].is_boolean()) {
    bool ok = false;
    const std::optional<fifo::ticket_id> p = ticket_or_null(doc["promoted"], ok);
    if (ok) return {doc["ok"].get<bool>(), p};
  }
  fail("process_protocol", "the child " + child_->command_text() + " answered `" + scenario::printable(shorten(*a, 200)) + "` to " + request +
                               ", where {\"ok\":true|false,\"promoted\":T|null} was expected");
  return {false, std::nullopt};
}

bool process_core::claim(fifo::ticket_id t, std::int64_t now_ns) {
  const std::string request =
      R"({"type":"claim","ticket":)" + std::to_string(t) + R"(,"now":)" + std::to_string(now_ns) + "}";
  const std::optional<std::string> a = exchange(request, now_ns);
  if (!a) return false;
  if (*a == R"({"claimed":true})") return true;
  if (*a == R"({"claimed":false})") return false;
  json doc;
  try {
    doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
  } catch (const std::exception&) {
  }
  if (has_exactly(doc, {"claimed"}) && doc["claimed"].is_boolean()) return doc["claimed"].get<bool>();
  fail("process_protocol", "the child " + child_->command_text() + " answered `" + scenario::printable(shorten(*a, 200)) + "` to " + request +
                               ", where {\"claimed\":true|false} was expected");
  return false;
}

fifo::leave_result process_core::leave(const char* type, fifo::ticket_id t, std::int64_t now_ns) {
  const std::string request = std::string(R"({"type":")") + type + R"(","ticket":)" + std::to_string(t) +
                              R"(,"now":)" + std::to_string(now_ns) + "}";
  const std::optional<std::string> a = exchange(request, now_ns);
  if (!a) return {fifo::leave_outcome::not_waiting, std::nullopt};
  json doc;
  try {
    doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
  } catch (const std::exception&) {
  }
  if (has_exactly(doc, {"result", "promoted"}) && doc["result"].is_string()) {
    bool ok = false;
    const std::optional<fifo::ticket_id> p = ticket_or_null(doc["promoted"], ok);
    const std::string r = doc["result"].get<std::string>();
    if (ok && r == "removed") return {fifo::leave_outcome::removed, p};
    if (ok && r == "handover_released") return {fifo::leave_outcome::handover_released, p};
    if (ok && r == "not_waiting") return {fifo::leave_outcome::not_waiting, p};
  }
  fail("process_protocol", "the child " + child_->command_text() + " answered `" + scenario::printable(shorten(*a, 200)) + "` to " + request +
                               ", where {\"result\":\"removed\"|\"handover_released\"|\"not_waiting\",\"promoted\":T|null} "
                               "was expected");
  return {fifo::leave_outcome::not_waiting, std::nullopt};
}

}  // namespace admit::world::fifo_world

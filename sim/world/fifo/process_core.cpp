#include "sim/world/fifo/process_core.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/admit_assert.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/fifo/process_messages.hpp"

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
// process may use, and its children inherit the pin: every message is a
// round trip between the two, and on one CPU it costs a context switch, where
// across two each wake-up crosses CPUs (docs/performance.md, "Process gates":
// about half the CPU per request). The first thread of a process takes the CPU
// it runs on then (where the system's balancing put it, so admitsim processes
// run side by side do not pile onto one CPU), each next thread the next CPU.
// Only where work runs changes, never what it computes.
void pin_this_thread_once() {
  thread_local bool pinned = false;
  if (pinned) return;
  pinned = true;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  if (cpus.size() <= 1) return;
  static std::atomic<std::size_t> next{0};
  const int now_on = ::sched_getcpu();
  const std::size_t here = static_cast<std::size_t>(
      std::find(cpus.begin(), cpus.end(), now_on) - cpus.begin());  // cpus.size() when not found: the first
  const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
  const int cpu = cpus[((here == cpus.size() ? 0 : here) + k) % cpus.size()];
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
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
  ask(msg::start{std::string(gate), seed, cfg}.to_json(), 0, "{\"ok\":true}", [](const json& a) {
    msg::read_ok(a);
    return true;
  });
}

process_core::~process_core() {
  if (failure_ || child_ == nullptr || child_->failure() != nullptr) return;
  // The run is over: a child that says so goes back to the pool for the next run.
  const std::string request = msg::gate_call{msg::gate_call::kind::stop, last_now_ns_}.to_json().dump();
  const std::optional<std::string> a = child_->exchange(request, spec_.message_timeout_ns);
  if (!a) return;
  try {
    json doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
    msg::read_ok(doc);
  } catch (const std::exception&) {
    return;  // not reused
  }
  give_back(spec_, std::move(child_));
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

template <class Read>
std::optional<std::invoke_result_t<Read, const nlohmann::ordered_json&>> process_core::ask(
    const nlohmann::ordered_json& request_json, std::int64_t now_ns, const char* expected, Read read) {
  if (failure_) return std::nullopt;
  ADMIT_ASSERT(child_ != nullptr, "a core that has not failed has its child");
  last_now_ns_ = std::max(last_now_ns_, now_ns);
  const std::string request = request_json.dump();
  const std::optional<std::string> a = child_->exchange(request, spec_.message_timeout_ns);
  if (!a) {
    const proc::child_failure* f = child_->failure();
    ADMIT_ASSERT(f != nullptr, "an exchange without an answer failed");
    fail(f->kind, f->detail + ", at the request " + shorten(request, 300));
    return std::nullopt;
  }
  const std::string quoted = "`" + scenario::printable(shorten(*a, 200)) + "`";
  json doc;
  try {
    doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
  } catch (const std::exception& e) {
    fail("process_protocol", "the child " + child_->command_text() + " answered " + quoted + " to " + request +
                                 ", which is not JSON (" + shorten(e.what(), 200) + "), where " + expected +
                                 " was expected");
    return std::nullopt;
  }
  if (const std::optional<std::string> error = msg::error_of(doc)) {
    fail("process_error", "the child " + child_->command_text() + " answered the request " + shorten(request, 300) +
                              " with the error \"" + scenario::printable(shorten(*error, 1000)) + "\"");
    return std::nullopt;
  }
  try {
    return read(doc);
  } catch (const codec::codec_error& e) {
    fail("process_protocol", "the child " + child_->command_text() + " answered " + quoted + " to " + request + " (" +
                                 (e.path.empty() ? std::string("/") : e.path) + ": " + e.what() + "), where " +
                                 expected + " was expected");
    return std::nullopt;
  }
}

fifo::acquire_result process_core::acquire(fifo::ticket_id t, std::int64_t now_ns) {
  const auto r = ask(msg::ticket_call{msg::ticket_call::kind::acquire, t, now_ns}.to_json(), now_ns,
                     "{\"result\":\"admitted\"}, {\"result\":\"queue_full\"} or {\"result\":\"queued\",\"deadline\":D} "
                     "(D an integer, not before now, or null)",
                     [now_ns](const json& a) { return msg::read_acquire(a, now_ns); });
  return r ? *r : fifo::acquire_result{fifo::acquire_outcome::queue_full, 0};
}

fifo::release_result process_core::release(std::int64_t now_ns) {
  const auto r = ask(msg::gate_call{msg::gate_call::kind::release, now_ns}.to_json(), now_ns,
                     "{\"ok\":true|false,\"promoted\":T|null}", [](const json& a) { return msg::read_release(a); });
  return r ? *r : fifo::release_result{false, std::nullopt};
}

bool process_core::claim(fifo::ticket_id t, std::int64_t now_ns) {
  const auto r = ask(msg::ticket_call{msg::ticket_call::kind::claim, t, now_ns}.to_json(), now_ns,
                     "{\"claimed\":true|false}", [](const json& a) { return msg::read_claim(a); });
  return r ? *r : false;
}

fifo::leave_result process_core::leave(bool expire, fifo::ticket_id t, std::int64_t now_ns) {
  const auto k = expire ? msg::ticket_call::kind::expire : msg::ticket_call::kind::cancel;
  const auto r = ask(msg::ticket_call{k, t, now_ns}.to_json(), now_ns,
                     "{\"result\":\"removed\"|\"handover_released\"|\"not_waiting\",\"promoted\":T|null}",
                     [](const json& a) { return msg::read_leave(a); });
  return r ? *r : fifo::leave_result{fifo::leave_outcome::not_waiting, std::nullopt};
}

}  // namespace admit::world::fifo_world

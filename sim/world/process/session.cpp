#include "sim/world/process/session.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"

namespace admit::world::process {

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

std::string session::name_of(const scenario::process_spec& spec) {
  ADMIT_ASSERT(!spec.command.empty(), "a process names a command");
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

session::session(const scenario::process_spec& spec) : spec_(spec), child_(take_child(spec)) {
  ADMIT_ASSERT(child_ != nullptr, "a child, started or failed");
  if (const proc::child_failure* f = child_->failure()) fail(f->kind, f->detail);
}

session::~session() {
  if (killed_ || failure_ || child_ == nullptr || child_->failure() != nullptr || !stop_) return;
  // The run is over: a child that says so goes back to the pool for the next run.
  const std::optional<std::string> a = child_->exchange(stop_->dump(), spec_.message_timeout_ns);
  if (!a) return;
  try {
    const json doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
    codec::expect_only_keys(doc, "", {"ok"});
    if (!codec::read_bool(doc, "", "ok")) return;
  } catch (const std::exception&) {
    return;  // not reused
  }
  give_back(spec_, std::move(child_));
}

void session::kill() {
  killed_ = true;
  child_.reset();  // the child_process kills its group and reaps it
}

std::string session::child_text() const {
  return "the child " + (child_ ? child_->command_text() : std::string("(killed)"));
}

void session::fail(std::string kind, std::string detail) {
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
  failure_ = session_failure{std::move(kind), std::move(detail)};
  ADMIT_ASSERT(failure_ && !failure_->kind.empty(), "a failure has a kind");
}

std::optional<json> session::exchange(const json& request_json, const char* expected) {
  if (failure_) return std::nullopt;
  ADMIT_ASSERT(!killed_ && child_ != nullptr, "a killed session is asked nothing (its caller opens a new one)");
  const std::string request = request_json.dump();
  last_request_ = shorten(request, 300);
  const std::optional<std::string> a = child_->exchange(request, spec_.message_timeout_ns);
  if (!a) {
    const proc::child_failure* f = child_->failure();
    ADMIT_ASSERT(f != nullptr, "an exchange without an answer failed");
    fail(f->kind, f->detail + ", at the request " + last_request_);
    return std::nullopt;
  }
  last_answer_ = scenario::printable(shorten(*a, 200));
  json doc;
  try {
    doc = scenario::parse_json_text(*a, scenario::json_parse_options{4});
  } catch (const std::exception& e) {
    fail("process_protocol", "the child " + child_->command_text() + " answered `" + last_answer_ + "` to " +
                                 last_request_ + ", which is not JSON (" +
                                 shorten(e.what(), 200) + "), where " + expected + " was expected");
    return std::nullopt;
  }
  if (doc.is_object() && doc.size() == 1) {
    const auto it = doc.find("error");
    if (it != doc.end() && it->is_string()) {
      fail("process_error", "the child " + child_->command_text() + " answered the request " + last_request_ +
                                " with the error \"" + scenario::printable(shorten(it->get<std::string>(), 1000)) +
                                "\"");
      return std::nullopt;
    }
  }
  return doc;
}

void session::refused(const codec::codec_error& e, const char* expected) {
  fail("process_protocol", "the child " + child_->command_text() + " answered `" + last_answer_ + "` to " + last_request_ + " (" +
                               (e.path.empty() ? std::string("/") : e.path) + ": " + e.what() + "), where " + expected +
                               " was expected");
}

}  // namespace admit::world::process

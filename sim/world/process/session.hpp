// session: one conversation with a child process that speaks a JSON-lines
// protocol of docs/process-gate.md (a FIFO gate core, a fleet worker's lease
// client).
//
// The child is taken from a pool of idle children of the same command and
// folder that this thread keeps (so `explore --jobs N` runs one child per
// thread and program, not one per run) and, when the session ends after a
// `stop` the child answered {"ok":true}, given back for the next run. A child
// that failed, or that the session was told to kill (a worker's crash), is
// never given back.
//
// Every answer is read strictly by the caller's reader (a message codec's
// from_json). No answer, an answer that is not JSON, an {"error": ...}
// answer, or one the reader refuses makes the session failed(): a kind
// (process_exited, process_hung, process_protocol, process_error) and one
// sentence that names the request and quotes the child's last stderr lines.
// From then on every ask answers nullopt. Nothing a child sends reaches an
// assertion.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "sim/codec/json_codec.hpp"
#include "sim/process/child_process.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::world::process {

struct session_failure {
  std::string kind;
  std::string detail;
};

class session {
 public:
  // Takes a child running spec.command in spec.cwd (an idle one of this thread's, or a new one).
  explicit session(const scenario::process_spec& spec);
  // Ends the conversation: `stop_request` is sent and the child given back if it answers {"ok":true}.
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  // Sends `request` and reads its answer with `read` (a function of the answer's JSON that throws
  // codec::codec_error on what does not fit); nullopt once the session failed. `expected` says, for the
  // failure's sentence, what answers fit.
  template <class Read>
  std::optional<std::invoke_result_t<Read, const nlohmann::ordered_json&>> ask(const nlohmann::ordered_json& request,
                                                                              const char* expected, Read read) {
    const std::optional<nlohmann::ordered_json> doc = exchange(request, expected);
    if (!doc) return std::nullopt;
    try {
      return read(*doc);
    } catch (const codec::codec_error& e) {
      refused(e, expected);
      return std::nullopt;
    }
  }

  // What `~session` sends to end the conversation (the protocol's stop, carrying the latest `now`).
  void set_stop_request(nlohmann::ordered_json stop) { stop_ = std::move(stop); }
  // Kills the child now (a crash of the process it stands for); the session is not failed, but every
  // later ask is refused as an assertion would be: the caller opens a new session instead.
  void kill();
  bool killed() const noexcept { return killed_; }

  // Fails the session with `kind` and `detail` (the caller's own reading of an answer found it out of
  // protocol); the child's stderr tail is appended. The first failure is kept.
  void fail(std::string kind, std::string detail);
  const session_failure* failed() const noexcept { return failure_ ? &*failure_ : nullptr; }
  // "the child <command>", as sentences name it.
  std::string child_text() const;
  // The request being answered, shortened for a sentence.
  const std::string& last_request() const noexcept { return last_request_; }

  // The name a report gives a process: "process:" and the command's last word naming a file (shortened),
  // or "process:" + spec.name when it has one.
  static std::string name_of(const scenario::process_spec& spec);

 private:
  std::optional<nlohmann::ordered_json> exchange(const nlohmann::ordered_json& request, const char* expected);
  void refused(const codec::codec_error& e, const char* expected);

  scenario::process_spec spec_;
  std::unique_ptr<proc::child_process> child_;
  std::optional<session_failure> failure_;
  std::optional<nlohmann::ordered_json> stop_;
  std::string last_request_;
  std::string last_answer_;  // printable, shortened
  bool killed_ = false;
};

// Idle children this thread keeps, in all (each is killed when the thread ends).
inline constexpr std::size_t process_pool_max = 64;

}  // namespace admit::world::process

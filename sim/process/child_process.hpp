// child_process: a program admitsim runs beside a simulation and speaks
// JSON lines with (docs/process-gate.md).
//
// The child's stdin and stdout are one end of a Unix socket pair (so a write
// to a child that died is an error, never a SIGPIPE), its stderr a pipe
// whose last bytes are kept to quote when it fails. It runs in its own
// process group, in the working directory it was given, with admitsim's
// environment plus ADMITSIM_PROCESS_PROTOCOL=1, and inherits no other
// descriptor.
//
// One exchange at a time: a request line out, one answer line back, within a
// wall-clock limit. Wall time is read only to enforce that limit, so it can
// make a run stop (inconclusive), never change what a finished run reports.
// Every failure (could not start, exited, hung, a line too long or not
// UTF-8 text) leaves the child killed and the failure recorded; no input a
// child can send reaches an assertion.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace admit::proc {

struct child_failure {
  std::string kind;    // process_exited, process_hung, process_protocol
  std::string detail;  // one sentence (without the stderr tail)
};

class child_process {
 public:
  static constexpr std::size_t max_line_bytes = std::size_t{1} << 20;
  static constexpr std::size_t stderr_tail_bytes = 4096;

  // Starts `argv` (argv[0] looked up on PATH unless it holds a '/') in the
  // directory `cwd`. Never null: a child that could not start is returned
  // failed (kind process_exited).
  static std::unique_ptr<child_process> start(const std::vector<std::string>& argv, const std::string& cwd);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // Writes `line` (no newline in it; one is added) and reads one answer
  // line, each within `timeout_ns` of wall time. nullopt once failed.
  std::optional<std::string> exchange(std::string_view line, std::int64_t timeout_ns);

  const child_failure* failure() const noexcept { return failure_ ? &*failure_ : nullptr; }
  // The child's last stderr bytes (at most stderr_tail_bytes), as read so far.
  std::string stderr_tail() const;
  // The command line as a message names it: its words joined by spaces, shortened past 200 bytes.
  std::string command_text() const;

 private:
  child_process() = default;
  void fail(std::string kind, std::string detail);
  // Reads whatever stderr has now, without waiting.
  void drain_stderr();
  // Kills the process group and reaps the child; returns how it ended ("exited with status 1").
  std::string kill_and_reap();

  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int io_fd_ = -1;   // our end of the socket pair: requests out, answers in
  int err_fd_ = -1;  // the read end of the child's stderr
  std::string in_;   // bytes read past the last answer line
  std::string err_;  // the stderr tail (a ring kept as a string)
  std::optional<child_failure> failure_;
};

}  // namespace admit::proc

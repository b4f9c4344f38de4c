// trace_file: the --trace FILE of `run`, `replay` and `explore --order`:
// every trace entry of every run, as JSON lines (docs/trace.md).
//
// Each run is a `begin` line, one line per entry in the order the run traced
// them, and an `end` line with the run's count of entries; every line opens
// with the run's name ("" for a FIFO run), so lines of different runs are
// told apart and a diff of two traces names the run of every line it shows.
// Nothing in a line depends on the wall clock or on how the file is written:
// the same scenario and seed give the same bytes.
//
// Memory is bounded: lines go through one buffer of trace_buffer_bytes to an
// output_stream (write_file.hpp), so a regular file appears under its name,
// complete, only at commit(). A write that fails (ENOSPC, EFBIG), a file past
// trace_bytes_max or an entry that could not be made stops the file; commit()
// then says why and leaves nothing under the name (a device or FIFO has had
// the lines so far, without the last run's `end` line).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/check/trace_sink.hpp"
#include "sim/cli/write_file.hpp"

namespace admit::cli {

// The format's name, in every `begin` line.
inline constexpr const char* trace_format = "admitsim-trace/1";
// The largest trace file: 4 GiB, some 35 million entries (docs/limits.md).
inline constexpr std::uint64_t trace_bytes_max = std::uint64_t{4} << 30;
// Lines are written in pieces of about this size.
inline constexpr std::size_t trace_buffer_bytes = 64 * 1024;

// What every run's `begin` line says of the run besides its name.
struct trace_header {
  std::string scenario;  // its name
  std::string file;      // as given on the command line
  std::uint64_t seed = 0;
  std::optional<std::string> order;  // explore --order: the same-instant order run
};

class trace_file final : public check::trace_sink {
 public:
  explicit trace_file(std::uint64_t bytes_max = trace_bytes_max) : bytes_max_(bytes_max) {}

  // Opens `path` (output_stream::open); why it cannot, or nullopt.
  std::optional<std::string> open(const std::string& path, trace_header header);

  void begin_run(std::string_view run) override;
  void entry(const check::trace_line& e) noexcept override;
  void end_run() override;
  void lost(std::string_view why) noexcept override;

  // Why the file stopped (or nullopt).
  const std::optional<std::string>& failed() const noexcept { return out_.failed(); }
  // The lines buffered so far written out; false when the file has stopped.
  bool flush() noexcept;
  // The rest of the lines written and the file put in place; why not, or nullopt.
  std::optional<std::string> commit();

  std::uint64_t bytes() const noexcept { return written_ + buf_.size(); }
  std::uint64_t entries() const noexcept { return entries_; }  // of the current (or last) run

 private:
  // After each line: the limit, and the buffer written out once full.
  void line_done() noexcept;

  output_stream out_;
  trace_header header_;
  std::uint64_t bytes_max_;
  std::string buf_;
  std::string run_prefix_;  // {"run":"NAME",
  std::uint64_t entries_ = 0;
  std::uint64_t written_ = 0;  // bytes handed to out_
  bool in_run_ = false;
};

// Another path of the verb's, which --trace must not name: `what` is its
// option ("--out") or what it holds ("the scenario file").
struct other_path {
  std::string path;
  std::string what;
  bool input = false;  // a file read ("-" is standard input, no clash with a trace to standard output)
};

// The checks of --trace PATH before anything runs: writable (check_output)
// and none of `others`. Throws input_error (errors.hpp).
void check_trace_path(const std::string& path, const std::vector<other_path>& others);
// Opens the checked PATH for `trace`; throws input_error when it cannot.
void open_trace(trace_file& trace, const std::string& path, trace_header header);
// After the runs: every line written out, or why not as an input_error
// (before the verb writes its other outputs, so that the error names the
// file that filled the disk).
void flush_trace(trace_file& trace, const std::string& path);
// The trace put in place; throws input_error when it cannot be.
void commit_trace(trace_file& trace, const std::string& path);

// Appends `s` to `out` as a JSON string, quotes included: '"', '\' and control
// characters escaped, bytes that are not UTF-8 replaced by U+FFFD, so that
// every line parses whatever text an entry holds.
void append_json_string(std::string& out, std::string_view s);

}  // namespace admit::cli

// output_file: how every verb (and a program on the library, such as
// examples/own_gate) writes a file, so that a reader never sees half
// of one and no path is replaced by something it did not name.
//
//   "-"                       standard output;
//   a regular file, or a new  written to a temporary file of a unique name
//   name in an existing       (mkstemp) in the same folder, fsync'd, then
//   folder                    renamed over the name: two writers never share
//                             a temporary file;
//   a symbolic link           followed: its target is written as above and
//                             the link stays a link;
//   anything else writable    (a character device such as /dev/null, a FIFO,
//                             /dev/stdout) written directly, never renamed over.
//
// A failed write (ENOSPC, EIO, ...) removes the temporary file and names the
// errno. check_output says beforehand, without writing, whether a path could
// be written, so that a verb refuses bad output paths before it runs.
// output_stream writes a file piece by piece under the same rules (a trace
// too large to hold in memory): nothing replaces what the path names until
// it commits.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace admit::reports {

// Why `path` cannot be written as write_output would (its folder is missing
// or not writable, it is a directory, ...), or nullopt.
std::optional<std::string> check_output(const std::string& path);

// Creates the folder `dir` and its parents if missing; why it cannot hold new
// files, or nullopt.
std::optional<std::string> prepare_output_dir(const std::string& dir);

// Writes `bytes` to `path` as above. Returns nullopt on success, else why it
// failed, naming the file as `what` (such as "cannot write the report (No
// space left on device)"), for the caller to report with the path.
std::optional<std::string> write_output(const std::string& path, const std::string& bytes,
                                        const std::string& what = "file");

// A file written piece by piece, as write_output writes it whole: a regular
// file (or a new name) goes to a temporary file in its folder, renamed over
// the name by commit() alone; a device or FIFO is written in place; "-" is
// standard output. The first failed write is kept (`failed`) and every later
// one skipped; commit() then removes the temporary file and says why, as
// does the destructor of a stream never committed, without a word.
class output_stream {
 public:
  output_stream() = default;
  output_stream(const output_stream&) = delete;
  output_stream& operator=(const output_stream&) = delete;
  ~output_stream();

  // Opens `path` for the `what` it will hold (for messages: "trace"); why it cannot, or nullopt.
  std::optional<std::string> open(const std::string& path, const std::string& what);
  // Appends `bytes`; false once any write has failed.
  bool write(std::string_view bytes) noexcept;
  // Stops the stream with `why` (such as a limit reached): nothing more is
  // written and commit() fails with it.
  void fail(std::string_view why) noexcept;
  const std::optional<std::string>& failed() const noexcept { return failed_; }
  // Syncs and renames the file into place (a device: closes it). Why it
  // could not, or nullopt: then the file is complete under its name.
  std::optional<std::string> commit();

 private:
  void discard() noexcept;
  // failed_ = "cannot write the WHAT (WHY)", then discard(); the words "out of memory" when it cannot be made.
  void set_failed(std::string_view how, std::string_view why) noexcept;

  int fd_ = -1;
  bool to_stdout_ = false;
  bool replacing_ = false;  // fd_ is a temporary file, renamed over target_ at commit
  std::string target_, tmp_, what_;
  std::optional<std::string> failed_;
};

// Whether two output paths name the same file once symbolic links are
// followed ("-" is the same as "-" only).
bool same_output(const std::string& a, const std::string& b);

// An exclusive lock on a folder (flock on DIR/.admitsim-explore.lock), held
// until the object goes, so that two searches never write one folder's files.
class dir_lock {
 public:
  dir_lock() = default;
  dir_lock(const dir_lock&) = delete;
  dir_lock& operator=(const dir_lock&) = delete;
  ~dir_lock();
  // Why the lock could not be taken (another process holds it, ...), or nullopt.
  std::optional<std::string> lock(const std::string& dir);

 private:
  int fd_ = -1;
};

}  // namespace admit::reports

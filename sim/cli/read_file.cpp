#include "sim/cli/read_file.hpp"

#include "sim/scenario/json_parse.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "sim/cli/errors.hpp"
#include "sim/scenario/loader.hpp"

namespace admit::cli {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

input_error too_large(const std::string& path, std::size_t limit) {
  return {path, "larger than the input limit of " + std::to_string(limit) + " bytes (" + std::to_string(limit >> 20) +
                    " MiB)"};
}

// "WHAT (strerror of e)" about `path`; the caller reads errno into `e` before building WHAT can change it.
input_error errno_error(const std::string& path, const std::string& what, int e) {
  return {path, what + " (" + std::strerror(e) + ")"};
}

// Reads fd to its end, refusing more than `limit` bytes; closes nothing.
std::string read_all(int fd, const std::string& path, std::size_t limit) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      throw errno_error(path, "cannot read the file", e);
    }
    if (n == 0) return out;
    if (out.size() + static_cast<std::size_t>(n) > limit) throw too_large(path, limit);
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string read_input(const std::string& path, const std::string& what, bool dash_is_stdin, std::size_t limit) {
  if (path == "-" && dash_is_stdin) return read_all(STDIN_FILENO, "-", limit);
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    throw errno_error(path, "cannot open the " + what, e);
  }
  struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    throw errno_error(path, "cannot read the file", e);
  }
  if (!S_ISREG(st.st_mode)) throw input_error{path, "expected a " + what + ", got " + kind_of(st.st_mode)};
  if (static_cast<std::uint64_t>(st.st_size) > limit) throw too_large(path, limit);
  // Back to blocking reads: a regular file never blocks, and some file systems refuse O_NONBLOCK reads.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return read_all(fd, path, limit);  // the limit again: the file may grow while it is read
}

scenario::scenario parse_scenario(const std::string& file, const std::string& bytes, nlohmann::ordered_json& doc) {
  try {
    // A protocol file is read like the scenario (regular files only, bounded), relative to its directory.
    scenario::load_files files;
    files.base_dir = file == "-" ? "" : scenario::directory_of(file);
    files.read = [](const std::string& path) {
      // The loader names the JSON path of the reference; the message says what was wrong with the file.
      try {
        return read_input(path, "file", false);
      } catch (const input_error& e) {
        throw std::runtime_error(e.text());
      }
    };
    return scenario::load_scenario_text(bytes, doc, files);
  } catch (const scenario::scenario_error& e) {
    throw input_error{file, e.what()};
  }
}

scenario::scenario parse_scenario(const std::string& file, const std::string& bytes) {
  nlohmann::ordered_json doc;
  const scenario::json_dismantler teardown{doc};  // frees without allocating, also while a bad_alloc unwinds
  return parse_scenario(file, bytes, doc);
}

}  // namespace admit::cli

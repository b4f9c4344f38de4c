#include "sim/cli/write_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace admit::cli {

namespace {

namespace fs = std::filesystem;

std::string errno_text(int e) { return std::strerror(e); }

// The folder part of a path ("." for a bare name).
std::string folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

// `path` with its last component's symbolic links followed (what a write
// through it reaches); nullopt past 40 links (a loop).
std::optional<std::string> follow_links(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::vector<char> buf(PATH_MAX + 1);
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) return path;
    const std::string target(buf.data(), static_cast<std::size_t>(n));
    path = (!target.empty() && target.front() == '/') ? target : (fs::path(folder_of(path)) / target).string();
  }
  return std::nullopt;
}

// What a write to `path` reaches: the path to write, and its stat when it exists. An existing
// regular file is named by its real path (its folder is where the temporary file goes); anything
// else that exists is written through `path` itself (/dev/stdout on a pipe resolves to no path);
// a missing name through its dangling links, if any.
struct reached {
  std::string path;
  bool exists = false;
  struct stat st {};
};
std::optional<reached> reach(const std::string& path) {
  reached r;
  if (::stat(path.c_str(), &r.st) == 0) {
    r.exists = true;
    r.path = path;
    if (S_ISREG(r.st.st_mode)) {
      std::error_code ec;
      const fs::path real = fs::canonical(path, ec);
      if (!ec) r.path = real.string();
    }
    return r;
  }
  const std::optional<std::string> target = follow_links(path);
  if (!target) return std::nullopt;
  r.path = *target;
  r.exists = ::stat(r.path.c_str(), &r.st) == 0;
  return r;
}

std::optional<std::string> folder_writable(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return "no such folder: " + dir;
    return "cannot use the folder " + dir + " (" + errno_text(errno) + ")";
  }
  if (!S_ISDIR(st.st_mode)) return dir + " is not a folder";
  // A file created and removed at once: permissions alone do not say what a read-only or
  // pseudo file system (/proc, /sys) refuses, and root passes every permission check.
  std::string probe = (fs::path(dir) / ".admitsim-probe.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return "cannot write in the folder " + dir + " (" + errno_text(errno) + ")";
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The permissions a new file gets (0666 less the umask), read once: umask can
// only be read by setting it, and the writes happen on one thread.
mode_t new_file_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(022);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

std::optional<std::string> write_replacing(const std::string& target, const std::string& bytes,
                                           const std::string& what, std::optional<mode_t> mode) {
  const std::string dir = folder_of(target);
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + a string.
  std::string hidden(1, '.');
  hidden += fs::path(target).filename().string();
  hidden += ".XXXXXX";
  std::string tmpl = (fs::path(dir) / hidden).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return "cannot write the " + what + " (" + errno_text(errno) + ")";
  const std::string tmp(name.data());
  auto fail = [&](int e) -> std::optional<std::string> {
    ::unlink(tmp.c_str());
    return "cannot write the " + what + " (" + errno_text(e) + ")";
  };
  if (::fchmod(fd, mode.value_or(new_file_mode())) != 0 || !write_all(fd, bytes) || ::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(e);
  }
  if (::close(fd) != 0) return fail(errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) return fail(errno);
  // The rename itself survives a crash once the folder is on disk; a folder that cannot be synced is no failure.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return std::nullopt;
}

std::optional<std::string> write_direct(const std::string& target, const std::string& bytes, const std::string& what) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return "cannot write the " + what + " (" + errno_text(errno) + ")";
  const bool ok = write_all(fd, bytes);
  const int e = errno;
  const bool closed = ::close(fd) == 0;
  if (!ok) return "cannot write the " + what + " (" + errno_text(e) + ")";
  if (!closed) return "cannot write the " + what + " (" + errno_text(errno) + ")";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_output(const std::string& path) {
  if (path == "-") return std::nullopt;
  if (path.empty()) return "expected a file name, got an empty path";
  errno = 0;
  const std::optional<reached> r = reach(path);
  if (!r) return "too many levels of symbolic links";
  if (r->exists) {
    if (S_ISDIR(r->st.st_mode)) return "expected a file, got a directory";
    if (S_ISREG(r->st.st_mode)) return folder_writable(folder_of(r->path));
    if (::access(r->path.c_str(), W_OK) != 0) return "cannot write to it (" + errno_text(errno) + ")";
    return std::nullopt;
  }
  if (errno != 0 && errno != ENOENT && errno != ENOTDIR) return "cannot use it (" + errno_text(errno) + ")";
  return folder_writable(folder_of(r->path));
}

std::optional<std::string> prepare_output_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create the folder (" + ec.message() + ")";
  if (auto why = folder_writable(dir)) return why;
  return std::nullopt;
}

std::optional<std::string> write_output(const std::string& path, const std::string& bytes, const std::string& what) {
  if (path == "-") {
    std::fflush(stdout);
    if (!write_all(STDOUT_FILENO, bytes)) return "cannot write the " + what + " to standard output (" + errno_text(errno) + ")";
    return std::nullopt;
  }
  const std::optional<reached> r = reach(path);
  if (!r) return "cannot write the " + what + " (too many levels of symbolic links)";
  if (!r->exists) return write_replacing(r->path, bytes, what, std::nullopt);
  if (S_ISDIR(r->st.st_mode)) return "cannot write the " + what + " (expected a file, got a directory)";
  if (!S_ISREG(r->st.st_mode)) return write_direct(r->path, bytes, what);
  return write_replacing(r->path, bytes, what, static_cast<mode_t>(r->st.st_mode & 07777));
}

bool same_output(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  const auto ra = reach(a), rb = reach(b);
  if (!ra || !rb) return a == b;
  if (ra->exists && rb->exists) return ra->st.st_dev == rb->st.st_dev && ra->st.st_ino == rb->st.st_ino;
  std::error_code ec1, ec2;
  return fs::weakly_canonical(ra->path, ec1) == fs::weakly_canonical(rb->path, ec2);
}

dir_lock::~dir_lock() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> dir_lock::lock(const std::string& dir) {
  const std::string path = (fs::path(dir) / ".admitsim-explore.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd_ < 0) return "cannot lock the folder: " + path + " (" + errno_text(errno) + ")";
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    if (e == EWOULDBLOCK) return "another admitsim explore is writing to this folder (it holds " + path + ")";
    return "cannot lock the folder: " + path + " (" + errno_text(e) + ")";
  }
  return std::nullopt;
}

}  // namespace admit::cli

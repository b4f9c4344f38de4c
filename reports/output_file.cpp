#include "reports/output_file.hpp"

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
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"

namespace admit::reports {

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
  output_stream out;
  if (auto why = out.open(path, what)) return why;
  out.write(bytes);
  return out.commit();
}

output_stream::~output_stream() { discard(); }

std::optional<std::string> output_stream::open(const std::string& path, const std::string& what) {
  ADMIT_ASSERT(fd_ < 0, "a stream is opened once");
  ADMIT_ASSERT(!failed_, "a stream is opened before anything failed");
  what_ = what;
  if (path == "-") {
    std::fflush(stdout);
    to_stdout_ = true;
    fd_ = STDOUT_FILENO;
    return std::nullopt;
  }
  const std::optional<reached> r = reach(path);
  if (!r) return "cannot write the " + what + " (too many levels of symbolic links)";
  if (r->exists && S_ISDIR(r->st.st_mode)) return "cannot write the " + what + " (expected a file, got a directory)";
  target_ = r->path;
  if (r->exists && !S_ISREG(r->st.st_mode)) {
    // A device or FIFO: written in place, never renamed over.
    fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) return "cannot write the " + what + " (" + errno_text(errno) + ")";
    return std::nullopt;
  }
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + a string.
  std::string hidden(1, '.');
  hidden += fs::path(target_).filename().string();
  hidden += ".XXXXXX";
  const std::string tmpl = (fs::path(folder_of(target_)) / hidden).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return "cannot write the " + what + " (" + errno_text(errno) + ")";
  fd_ = fd;
  tmp_ = name.data();
  replacing_ = true;
  // An existing file keeps its permissions; a new one gets 0666 less the umask.
  const mode_t mode = r->exists ? static_cast<mode_t>(r->st.st_mode & 07777) : new_file_mode();
  if (::fchmod(fd_, mode) != 0) {
    const int e = errno;
    discard();
    return "cannot write the " + what + " (" + errno_text(e) + ")";
  }
  return std::nullopt;
}

bool output_stream::write(std::string_view bytes) noexcept {
  if (failed_) return false;
  ADMIT_ASSERT(fd_ >= 0, "a stream is written once opened");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      set_failed(to_stdout_ ? " to standard output (" : " (", errno_text(errno));
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void output_stream::fail(std::string_view why) noexcept {
  if (!failed_) set_failed(" (", why);
}

void output_stream::set_failed(std::string_view how, std::string_view why) noexcept {
  try {
    std::string text = "cannot write the " + what_;
    text += how;
    text += why;
    text += ')';
    failed_ = std::move(text);
  } catch (...) {  // bad_alloc: a short text needs no allocation
    failed_.emplace("out of memory");
  }
  discard();
}

std::optional<std::string> output_stream::commit() {
  if (failed_) return failed_;
  ADMIT_ASSERT(fd_ >= 0, "a stream is committed once, once opened");
  if (to_stdout_) {
    fd_ = -1;
    return std::nullopt;
  }
  const auto failure = [&](int e) -> std::optional<std::string> {
    set_failed(" (", errno_text(e));
    return failed_;
  };
  if (replacing_ && ::fsync(fd_) != 0) return failure(errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return failure(errno);
  if (!replacing_) return std::nullopt;
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) return failure(errno);
  tmp_.clear();
  // The rename itself survives a crash once the folder is on disk; a folder that cannot be synced is no failure.
  const int dfd = ::open(folder_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return std::nullopt;
}

void output_stream::discard() noexcept {
  if (fd_ >= 0 && !to_stdout_) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
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

}  // namespace admit::reports

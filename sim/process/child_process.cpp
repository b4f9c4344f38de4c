#include "sim/process/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "gate/admit_assert.hpp"

extern char** environ;

namespace admit::proc {

namespace {

std::string errno_text(int e) { return std::strerror(e); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The milliseconds poll() may wait until `deadline_ns`, at least 0.
int poll_ms_until(std::int64_t deadline_ns) {
  const std::int64_t left = deadline_ns - steady_ns();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>((left + 999'999) / 1'000'000, 60'000));
}

std::string seconds_text(std::int64_t ns) {
  std::string s = std::to_string(ns / 1'000'000'000);
  const std::int64_t ms = (ns / 1'000'000) % 1000;
  if (ms != 0) {
    std::string frac = std::to_string(1000 + ms).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s + " s";
}

}  // namespace

std::unique_ptr<child_process> child_process::start(const std::vector<std::string>& argv, const std::string& cwd) {
  ADMIT_ASSERT(!argv.empty(), "a command has a program");
  std::unique_ptr<child_process> c(new child_process());
  c->argv_ = argv;

  int io[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, io) != 0) {
    c->fail("process_exited", "could not start " + c->command_text() + ": socketpair: " + errno_text(errno));
    return c;
  }
  int err[2] = {-1, -1};
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(io[0]);
    ::close(io[1]);
    c->fail("process_exited", "could not start " + c->command_text() + ": pipe: " + errno_text(e));
    return c;
  }

  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "ADMITSIM_PROCESS_PROTOCOL=", 26) != 0) env_strings.emplace_back(*e);
  env_strings.emplace_back("ADMITSIM_PROCESS_PROTOCOL=1");
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_adddup2(&fa, io[1], 0);
  ::posix_spawn_file_actions_adddup2(&fa, io[1], 1);
  ::posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  ::posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  ::posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  sigset_t all;
  ::sigfillset(&all);
  sigset_t none;
  ::sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);

  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argp[0], &fa, &attr, argp.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&fa);
  ::posix_spawnattr_destroy(&attr);
  ::close(io[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(io[0]);
    ::close(err[0]);
    c->fail("process_exited", "could not start " + c->command_text() + " in " + cwd + ": " + errno_text(rc));
    return c;
  }
  c->pid_ = pid;
  c->io_fd_ = io[0];
  c->err_fd_ = err[0];
  ::fcntl(c->io_fd_, F_SETFL, ::fcntl(c->io_fd_, F_GETFL) | O_NONBLOCK);
  ::fcntl(c->err_fd_, F_SETFL, ::fcntl(c->err_fd_, F_GETFL) | O_NONBLOCK);
  return c;
}

child_process::~child_process() {
  if (pid_ > 0) kill_and_reap();
  close_fd(io_fd_);
  close_fd(err_fd_);
}

std::string child_process::command_text() const {
  std::string s;
  for (const std::string& a : argv_) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  if (s.size() > 200) s = s.substr(0, 197) + "...";
  return "`" + s + "`";
}

std::string child_process::stderr_tail() const { return err_; }

void child_process::drain_stderr() {
  if (err_fd_ < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(err_fd_, buf, sizeof buf);
    if (n > 0) {
      err_.append(buf, static_cast<std::size_t>(n));
      if (err_.size() > stderr_tail_bytes) err_.erase(0, err_.size() - stderr_tail_bytes);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) close_fd(err_fd_);
    return;
  }
}

std::string child_process::kill_and_reap() {
  ADMIT_ASSERT(pid_ > 0, "only a started child is reaped");
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    do r = ::waitpid(pid_, &status, 0);
    while (r < 0 && errno == EINTR);
  }
  pid_ = -1;
  if (r <= 0) return "ended";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

void child_process::fail(std::string kind, std::string detail) {
  if (failure_) return;
  failure_ = child_failure{std::move(kind), std::move(detail)};
}

std::optional<std::string> child_process::exchange(std::string_view line, std::int64_t timeout_ns) {
  if (failure_) return std::nullopt;
  ADMIT_ASSERT(pid_ > 0 && io_fd_ >= 0, "a running child");
  ADMIT_ASSERT(line.find('\n') == std::string_view::npos, "a request is one line");
  ADMIT_ASSERT(timeout_ns > 0, "an exchange has a time limit");
  const std::int64_t deadline = steady_ns() + timeout_ns;

  const auto ended = [&](const char* while_doing) {
    drain_stderr();
    const std::string how = kill_and_reap();
    fail("process_exited", "the child " + command_text() + " " + how + " " + while_doing);
  };
  const auto hung = [&](const char* while_doing) {
    drain_stderr();
    kill_and_reap();
    fail("process_hung", "the child " + command_text() + " took more than " + seconds_text(timeout_ns) + " " +
                             while_doing + " (killed)");
  };

  std::string out(line);
  out += '\n';
  std::size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(io_fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p[2] = {{io_fd_, POLLOUT, 0}, {err_fd_, POLLIN, 0}};
      const int ms = poll_ms_until(deadline);
      if (ms == 0) {
        hung("to read a request");
        return std::nullopt;
      }
      if (::poll(p, err_fd_ >= 0 ? 2 : 1, ms) < 0 && errno != EINTR) {
        ended("while admitsim waited to write a request");
        return std::nullopt;
      }
      drain_stderr();
      continue;
    }
    ended("before it read a request");
    return std::nullopt;
  }

  // The answer: poll first (after a send the child has yet to run), then read what came. The
  // stderr pipe is read only when poll says it holds bytes, so a chatty child never blocks on it.
  for (;;) {
    if (const std::size_t nl = in_.find('\n'); nl != std::string::npos) {
      std::string answer = in_.substr(0, nl);
      in_.erase(0, nl + 1);
      if (!answer.empty() && answer.back() == '\r') answer.pop_back();
      return answer;
    }
    if (in_.size() > max_line_bytes) {
      drain_stderr();
      kill_and_reap();
      fail("process_protocol", "the child " + command_text() + " wrote an answer line longer than " +
                                   std::to_string(max_line_bytes) + " bytes");
      return std::nullopt;
    }
    const int ms = poll_ms_until(deadline);
    if (ms == 0) {
      hung("to answer");
      return std::nullopt;
    }
    pollfd p[2] = {{io_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int ready = ::poll(p, err_fd_ >= 0 ? 2 : 1, ms);
    if (ready < 0 && errno != EINTR) {
      ended("while admitsim waited for its answer");
      return std::nullopt;
    }
    if (ready <= 0) continue;  // interrupted, or the time is up (checked above)
    if (err_fd_ >= 0 && (p[1].revents & (POLLIN | POLLHUP)) != 0) drain_stderr();
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    for (;;) {
      char buf[65536];
      const ssize_t n = ::recv(io_fd_, buf, sizeof buf, 0);
      if (n > 0) {
        in_.append(buf, static_cast<std::size_t>(n));
        if (static_cast<std::size_t>(n) < sizeof buf) break;  // what there was
        continue;
      }
      if (n == 0) {
        ended("before it answered");
        return std::nullopt;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      ended("before it answered");
      return std::nullopt;
    }
  }
}

}  // namespace admit::proc

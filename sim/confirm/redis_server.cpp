#include "sim/confirm/redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gate/admit_assert.hpp"

namespace admit::confirm {

namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw server_error(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  if (!ok) throw server_error(std::string("cannot find a free loopback port: ") + std::strerror(errno));
  return ntohs(a.sin_port);
}

std::string make_dir() {
  const fs::path base = fs::temp_directory_path();
  std::string templ = (base / "admitsim-confirm.XXXXXX").string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw server_error("cannot make a temporary folder under " + base.string() + ": " + std::strerror(errno));
  return std::string(buf.data());
}

// Closes every file descriptor from `first` up (in a forked child: system calls only).
void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U) == 0) return;
#endif
  rlimit lim{};
  const rlim_t top = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY ? lim.rlim_cur : 65'536;
  for (rlim_t fd = static_cast<rlim_t>(first); fd < top; ++fd) ::close(static_cast<int>(fd));
}

}  // namespace

std::optional<std::string> probe(std::uint16_t port, const std::string& inline_command, std::chrono::milliseconds timeout,
                                 std::size_t max_bytes) {
  const clock::time_point deadline = clock::now() + timeout;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::nullopt;
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } guard{fd};
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  const auto left_ms = [&] {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    return static_cast<int>(std::max<std::int64_t>(0, ms));
  };
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (errno != EINPROGRESS) return std::nullopt;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, left_ms()) != 1) return std::nullopt;
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) return std::nullopt;
  }
  const std::string out = inline_command + "\r\n";
  std::size_t sent = 0;
  while (sent < out.size()) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, left_ms()) != 1) return std::nullopt;
    const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return std::nullopt;
    sent += static_cast<std::size_t>(n);
  }
  std::string in;
  char buf[4096];
  for (;;) {
    // A whole reply: a line, or a bulk string's length line and that many bytes.
    const std::size_t eol = in.find("\r\n");
    if (eol != std::string::npos) {
      if (in[0] != '$') return in.substr(0, eol);
      std::int64_t len = -1;
      std::from_chars(in.data() + 1, in.data() + eol, len);
      if (len < 0) return in.substr(0, eol);
      if (in.size() >= eol + 2 + static_cast<std::size_t>(len)) return in.substr(eol + 2, static_cast<std::size_t>(len));
    }
    if (in.size() >= max_bytes) return in;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left_ms()) != 1) return std::nullopt;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    in.append(buf, static_cast<std::size_t>(n));
  }
}

redis_server::redis_server(std::string program, persistence keep, std::optional<std::uint16_t> replica_of, bool wait)
    : program_(std::move(program)), keep_(keep), replica_of_(replica_of) {
  dir_ = make_dir();
  try {
    port_ = free_port();
    spawn();
    if (!wait) return;
    wait_ready();
    if (const auto info = probe(port_, "INFO server", std::chrono::milliseconds(2000), 1 << 16)) {
      const std::size_t at = info->find("redis_version:");
      if (at != std::string::npos) {
        const std::size_t from = at + std::strlen("redis_version:");
        version_ = info->substr(from, info->find_first_of("\r\n", from) - from);
      }
    }
  } catch (...) {
    kill_and_reap();
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

redis_server::~redis_server() {
  kill_and_reap();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void redis_server::spawn() {
  ADMIT_ASSERT(pid_ < 0, "one server process at a time");
  std::vector<std::string> args = {program_, "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                   "--dir", dir_, "--save", "", "--daemonize", "no", "--logfile", "",
                                   "--appendonly", keep_ == persistence::none ? "no" : "yes",
                                   "--appendfsync", keep_ == persistence::aof_always ? "always" : "everysec",
                                   // A replica's full sync starts at once (the default waits 5 s for more
                                   // replicas to join it): a failover's replica syncs within its downtime.
                                   "--repl-diskless-sync-delay", "0"};
  if (replica_of_) {
    for (const char* a : {"--replicaof", "127.0.0.1"}) args.emplace_back(a);
    args.push_back(std::to_string(*replica_of_));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = dir_ + "/redis.log";
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw server_error(std::string("cannot fork to start redis-server: ") + std::strerror(errno));
  if (pid == 0) {
    // The child: its own group, killed with admitsim, its output to the log; then the server.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    // Nothing else of admitsim's: a socket a server kept (a link's, a worker's connection) would outlive
    // admitsim's close of it, and a connection it carries would never end.
    close_from(3);
    ::execvp(argv[0], argv.data());
    const char* msg = "admitsim confirm: cannot run the redis-server program\n";
    (void)!::write(2, msg, std::strlen(msg));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  pid_ = pid;
  paused_ = false;
  launched_ = clock::now();
}

void redis_server::wait_ready() {
  while (!ready()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

bool redis_server::ready() {
  ADMIT_ASSERT(pid_ > 0, "a launched server is asked whether it answers");
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    throw server_error("redis-server (" + program_ + ") on port " + std::to_string(port_) + " exited before it answered" +
                       (WIFEXITED(status) ? " (status " + std::to_string(WEXITSTATUS(status)) + ")" : "") +
                       "; its log ends: " + log_tail());
  }
  const auto pong = probe(port_, "PING", std::chrono::milliseconds(200));
  if (pong && *pong == "+PONG") return true;
  if (pong && pong->rfind("-LOADING", 0) != 0)
    throw server_error("redis-server on port " + std::to_string(port_) + " answered PING with " + *pong);
  if (clock::now() >= launched_ + start_timeout)
    throw server_error("redis-server on port " + std::to_string(port_) + " did not answer PING within " +
                       std::to_string(start_timeout.count()) + " ms; its log ends: " + log_tail());
  return false;
}

void redis_server::kill_and_reap() noexcept {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  paused_ = false;
}

void redis_server::pause() {
  ADMIT_ASSERT(pid_ > 0, "a running server is paused");
  ::kill(pid_, SIGSTOP);
  paused_ = true;
}

void redis_server::resume() {
  ADMIT_ASSERT(pid_ > 0, "a running server is resumed");
  ::kill(pid_, SIGCONT);
  paused_ = false;
}

void redis_server::crash() { kill_and_reap(); }

bool redis_server::promote() {
  ADMIT_ASSERT(replica_of_.has_value() && pid_ > 0, "a running replica is promoted");
  const auto ok = probe(port_, "REPLICAOF NO ONE", std::chrono::milliseconds(2000));
  if (!ok || *ok != "+OK") return false;
  replica_of_.reset();
  return true;
}

void redis_server::start(persistence keep) {
  launch(keep);
  wait_ready();
}

void redis_server::launch(persistence keep) {
  ADMIT_ASSERT(pid_ < 0, "a server is started again after its crash");
  keep_ = keep;
  spawn();
}

std::string redis_server::log_tail() const {
  std::ifstream in(dir_ + "/redis.log", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > 600) s = "..." + s.substr(s.size() - 600);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s.empty() ? "(empty)" : s;
}

}  // namespace admit::confirm

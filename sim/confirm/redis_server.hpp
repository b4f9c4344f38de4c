// redis_server: a private redis-server that confirming a counterexample on a
// real server starts, faults and stops (issue 39's first part; the tests in
// tests/integration/redis_server_test.cpp).
//
// Each server runs on a loopback port it picks (a free one, asked of the
// kernel), in a temporary folder of its own (its log, and its append-only
// file when the run keeps one), in a process group of its own, and dies with
// admitsim (PR_SET_PDEATHSIG). Faults are made real: pause is SIGSTOP, resume
// SIGCONT; a restart kills the server with SIGKILL (a crash: what it had not
// written is lost) and starts it again on the same port and folder, where it
// reads back what its persistence kept. The destructor kills the server and
// removes the folder, whatever happened: nothing it made outlives it.
//
// A server that cannot start (the program missing, the port taken, no PONG
// within start_timeout) is a server_error naming why and quoting the log's
// last lines, never a crash.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace admit::confirm {

struct server_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class persistence : std::uint8_t { none, aof_everysec, aof_always };

class redis_server {
 public:
  static constexpr std::chrono::milliseconds start_timeout{10'000};

  // Starts `program` (looked up on PATH unless it holds a '/') with `keep` as its persistence; with
  // `replica_of`, as a replica of the server at 127.0.0.1 on that port (REPLICAOF). With `wait` false it
  // only launches the process (as launch() does; then ready(), and no version is read).
  redis_server(std::string program, persistence keep, std::optional<std::uint16_t> replica_of = std::nullopt,
               bool wait = true);
  ~redis_server();
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  // "7.0.15", as INFO server says (empty if it did not say).
  const std::string& version() const noexcept { return version_; }

  void pause();   // SIGSTOP
  void resume();  // SIGCONT
  bool paused() const noexcept { return paused_; }
  // A crash (SIGKILL); the server is down until start().
  void crash();
  bool up() const noexcept { return pid_ > 0; }
  // Starts it again on the same port and folder, with `keep` as its persistence (after crash()), and waits
  // for its PONG.
  void start(persistence keep);
  // The same in two steps, for a caller that must not block while the server starts: launch() starts the
  // process; ready() says whether it answers PING yet (a server_error once it exited, or once start_timeout
  // has passed since launch()).
  void launch(persistence keep);
  bool ready();

  // A replica made a primary (REPLICAOF NO ONE): true when it said OK; it starts again as a primary.
  bool promote();
  bool replica() const noexcept { return replica_of_.has_value(); }

  // The log's last bytes, for a message.
  std::string log_tail() const;
  // Its temporary folder, and its process (-1 while it is down).
  const std::string& folder() const noexcept { return dir_; }
  pid_t pid() const noexcept { return pid_; }

 private:
  void spawn();
  void kill_and_reap() noexcept;
  // PONG within the start timeout, or a server_error.
  void wait_ready();

  std::string program_;
  persistence keep_;
  std::optional<std::uint16_t> replica_of_;
  std::string dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
  std::string version_;
  std::chrono::steady_clock::time_point launched_{};
};

// One command on a fresh connection to 127.0.0.1:port within `timeout`: its reply's first line (RESP: "+PONG",
// ":0", "$-1" for a nil), or a bulk string's bytes;
// nullopt when no reply came. For probing a server, not for the fleet's calls.
std::optional<std::string> probe(std::uint16_t port, const std::string& inline_command, std::chrono::milliseconds timeout,
                                 std::size_t max_bytes = 4096);

}  // namespace admit::confirm

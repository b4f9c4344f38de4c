// Goal: the private redis-server that confirming a counterexample runs on
// (sim/confirm/redis_server.hpp) starts on a loopback port of its own, answers,
// is paused and resumed (SIGSTOP, SIGCONT), crashes (SIGKILL) and starts
// again keeping what its persistence kept (nothing without an append-only
// file; every write with appendfsync always), and leaves nothing behind: its
// process and its folder are gone when it ends, and a program that is not a
// redis-server is a server_error, not a crash.
//
// Method. Each case starts its own server (redis-server from PATH, as CI
// installs it; it does not use the shared server of the other tests) and
// talks to it with probe(), one command a connection.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "sim/confirm/redis_server.hpp"

namespace {

using namespace admit::confirm;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::optional<std::string> ask(const redis_server& s, const std::string& cmd) { return probe(s.port(), cmd, 2000ms); }

}  // namespace

TEST_CASE("a private server starts, answers and leaves nothing behind", "[confirm][redis]") {
  std::string folder;
  pid_t pid = -1;
  {
    redis_server s("redis-server", persistence::none);
    folder = s.folder();
    pid = s.pid();
    CHECK(s.port() > 0);
    CHECK(fs::is_directory(folder));
    CHECK_FALSE(s.version().empty());
    CHECK(ask(s, "PING") == std::optional<std::string>("+PONG"));
    CHECK(ask(s, "SET k v") == std::optional<std::string>("+OK"));
    CHECK(ask(s, "GET k") == std::optional<std::string>("v"));
  }
  CHECK_FALSE(fs::exists(folder));
  CHECK(::kill(pid, 0) != 0);  // gone and reaped
}

TEST_CASE("a paused server answers nothing until it is resumed", "[confirm][redis]") {
  redis_server s("redis-server", persistence::none);
  s.pause();
  CHECK(s.paused());
  CHECK_FALSE(probe(s.port(), "PING", 300ms).has_value());
  s.resume();
  CHECK(ask(s, "PING") == std::optional<std::string>("+PONG"));
}

TEST_CASE("a crash loses what the persistence did not keep", "[confirm][redis]") {
  SECTION("no persistence: the restart comes back empty") {
    redis_server s("redis-server", persistence::none);
    REQUIRE(ask(s, "SET k v") == std::optional<std::string>("+OK"));
    s.crash();
    CHECK_FALSE(s.up());
    CHECK_FALSE(probe(s.port(), "PING", 300ms).has_value());
    s.start(persistence::none);
    CHECK(ask(s, "GET k") == std::optional<std::string>("$-1"));  // a nil bulk reads as its line
    CHECK(ask(s, "EXISTS k") == std::optional<std::string>(":0"));
  }
  SECTION("appendfsync always: the restart keeps every write") {
    redis_server s("redis-server", persistence::aof_always);
    REQUIRE(ask(s, "SET k v") == std::optional<std::string>("+OK"));
    s.crash();
    s.start(persistence::aof_always);
    CHECK(ask(s, "GET k") == std::optional<std::string>("v"));
  }
  SECTION("a paused server crashes too") {
    redis_server s("redis-server", persistence::none);
    s.pause();
    s.crash();
    s.start(persistence::none);
    CHECK(ask(s, "PING") == std::optional<std::string>("+PONG"));
  }
}

TEST_CASE("a program that is not a redis-server is an error that names why", "[confirm][redis]") {
  const auto folders = [] {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
      if (e.path().filename().string().rfind("admitsim-confirm.", 0) == 0) ++n;
    return n;
  };
  const std::size_t before = folders();
  for (const char* program : {"admitsim-no-such-redis-server", "false"}) {
    INFO(program);
    try {
      redis_server s(program, persistence::none);
      FAIL("started");
    } catch (const server_error& e) {
      CHECK(std::string(e.what()).find("exited before it answered") != std::string::npos);
    }
  }
  CHECK(folders() == before);
}

TEST_CASE("a server keeps none of admitsim's file descriptors", "[confirm][redis]") {
  // Goal: a socket admitsim opened (a link's, a worker's connection) is not inherited by a server it starts:
  // a copy kept there would hold the connection open after admitsim closed it, and a read on its other end
  // would never end. Method: a socket without close-on-exec, then a server, whose descriptors are listed.
  const int mine = ::socket(AF_INET, SOCK_STREAM, 0);  // no SOCK_CLOEXEC
  REQUIRE(mine >= 0);
  const std::string inode = fs::read_symlink("/proc/self/fd/" + std::to_string(mine)).string();
  {
    redis_server s("redis-server", persistence::none);
    std::size_t kept = 0;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(s.pid()) + "/fd")) {
      std::error_code ec;
      if (fs::read_symlink(e.path(), ec).string() == inode) ++kept;
    }
    CHECK(kept == 0);
  }
  ::close(mine);
}

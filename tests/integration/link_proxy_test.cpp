// Goal: the link a confirming run puts between each worker and its
// redis-server (sim/confirm/link_proxy.hpp) carries the simulated network's
// behaviour to the real one: bytes pass, late by the link's delay; a cut
// loses what is sent during it (a request never runs) and what is on its
// way, and the connection that lost a byte stays silent until its client
// closes it, while one that lost nothing goes on after the heal; a server that
// goes away while nothing is awaited costs the client nothing, its next
// request going to the server the link now names (a failover); close() ends
// everything; a link that cannot accept a connection (no descriptor left)
// says so, once, rather than leave its workers' calls to time out; a held
// link keeps what is sent while its server restarts, and delivers it after.
//
// Method. Each case starts its own redis-server (redis_server.hpp) and runs
// the proxy's io_context on a thread of its own; the test speaks RESP inline
// commands over plain blocking sockets (one `line` at a time), and asks the
// proxy to cut, heal or retarget on its own thread (on_loop).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/confirm/link_proxy.hpp"
#include "sim/confirm/redis_server.hpp"

namespace {

using namespace admit::confirm;
using namespace std::chrono_literals;
namespace asio = boost::asio;

// The proxy on a loop of its own thread.
struct loop {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> guard = asio::make_work_guard(io);
  std::thread thread{[this] { io.run(); }};
  ~loop() {
    guard.reset();
    io.stop();
    thread.join();
  }
  void on_loop(const std::function<void()>& f) {
    std::promise<void> done;
    asio::post(io, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }
};

// One client connection, blocking: a command line out, the first line of the reply back.
class client {
 public:
  explicit client(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~client() { ::close(fd_); }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  // The reply's first line, or nullopt when none came within `wait` (or the connection ended).
  std::optional<std::string> line(const std::string& command, std::chrono::milliseconds wait = 2000ms) {
    const std::string out = command + "\r\n";
    if (::send(fd_, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) return std::nullopt;
    std::string in;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (in.find("\r\n") == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) != 1) return std::nullopt;
      char buf[512];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return std::nullopt;
      in.append(buf, static_cast<std::size_t>(n));
    }
    std::string first = in.substr(0, in.find("\r\n"));
    // A bulk string: its bytes (the test's values fit in what came).
    if (!first.empty() && first[0] == '$' && first != "$-1") {
      const std::size_t from = in.find("\r\n") + 2;
      return in.substr(from, in.find("\r\n", from) - from);
    }
    return first;
  }

 private:
  int fd_ = -1;
};

std::optional<std::string> ask(const redis_server& s, const std::string& cmd) { return probe(s.port(), cmd, 2000ms); }

}  // namespace

TEST_CASE("bytes pass through the link, late by its delays", "[confirm][redis]") {
  redis_server s("redis-server", persistence::none);
  loop l;
  link_proxy proxy(l.io.get_executor(), s.port(), link_proxy::delays{40ms, 60ms});
  client c(proxy.port());
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(c.line("SET k v") == std::optional<std::string>("+OK"));
  // A lower bound only: the reply came no sooner than both delays allow.
  CHECK(std::chrono::steady_clock::now() - t0 >= 100ms);
  CHECK(c.line("GET k") == std::optional<std::string>("v"));
  CHECK(ask(s, "GET k") == std::optional<std::string>("v"));
  l.on_loop([&] { proxy.close(); });
  CHECK_FALSE(probe(proxy.port(), "PING", 300ms).has_value());  // closed: nothing answers
}

TEST_CASE("a cut loses what is sent during it, and the connection that lost a byte stays silent", "[confirm][redis]") {
  redis_server s("redis-server", persistence::none);
  loop l;
  link_proxy proxy(l.io.get_executor(), s.port(), link_proxy::delays{});
  client idle(proxy.port());
  client lost(proxy.port());
  REQUIRE(idle.line("PING") == std::optional<std::string>("+PONG"));
  REQUIRE(lost.line("PING") == std::optional<std::string>("+PONG"));
  l.on_loop([&] { proxy.cut(); });
  CHECK(lost.line("INCR n", 300ms) == std::nullopt);  // the request is lost...
  {
    client during(proxy.port());  // a connection opened during the cut fares no better
    CHECK(during.line("INCR n", 300ms) == std::nullopt);
  }
  l.on_loop([&] { proxy.heal(); });
  CHECK(ask(s, "GET n") == std::optional<std::string>("$-1"));  // ...and never ran
  CHECK(lost.line("PING", 300ms) == std::nullopt);  // its stream is not whole: silent until its client closes it
  CHECK(idle.line("PING") == std::optional<std::string>("+PONG"));  // it lost nothing
  client after(proxy.port());
  CHECK(after.line("INCR n") == std::optional<std::string>(":1"));
  CHECK(proxy.damaged() == 2);
  l.on_loop([&] { proxy.close(); });
}

TEST_CASE("a request on its way when the cut begins is lost with it", "[confirm][redis]") {
  redis_server s("redis-server", persistence::none);
  loop l;
  link_proxy proxy(l.io.get_executor(), s.port(), link_proxy::delays{200ms, 0ms});
  client c(proxy.port());
  std::promise<std::optional<std::string>> answer;
  std::thread asker([&] { answer.set_value(c.line("INCR n", 600ms)); });
  std::this_thread::sleep_for(50ms);  // the request waits out its delay in the link
  l.on_loop([&] { proxy.cut(); });
  asker.join();
  CHECK(answer.get_future().get() == std::nullopt);
  l.on_loop([&] { proxy.heal(); });
  CHECK(ask(s, "GET n") == std::optional<std::string>("$-1"));
  l.on_loop([&] { proxy.close(); });
}

TEST_CASE("a server replaced while nothing is awaited costs the client nothing", "[confirm][redis]") {
  redis_server first("redis-server", persistence::none);
  redis_server second("redis-server", persistence::none);
  loop l;
  link_proxy proxy(l.io.get_executor(), first.port(), link_proxy::delays{});
  client c(proxy.port());
  REQUIRE(c.line("SET k first") == std::optional<std::string>("+OK"));
  l.on_loop([&] { proxy.retarget(second.port()); });
  first.crash();
  std::this_thread::sleep_for(100ms);  // the link sees the upstream close
  CHECK(c.line("SET k second") == std::optional<std::string>("+OK"));  // the same client connection
  CHECK(ask(second, "GET k") == std::optional<std::string>("second"));
  CHECK(proxy.damaged() == 0);
  l.on_loop([&] { proxy.close(); });
}

TEST_CASE("a server that goes away while a reply is awaited loses it", "[confirm][redis]") {
  redis_server s("redis-server", persistence::none);
  loop l;
  link_proxy proxy(l.io.get_executor(), s.port(), link_proxy::delays{});
  client c(proxy.port());
  REQUIRE(c.line("PING") == std::optional<std::string>("+PONG"));
  s.pause();  // the request reaches a server that runs nothing, then dies
  std::promise<std::optional<std::string>> answer;
  std::thread asker([&] { answer.set_value(c.line("PING", 800ms)); });
  std::this_thread::sleep_for(100ms);
  s.crash();
  s.start(persistence::none);
  asker.join();
  CHECK(answer.get_future().get() == std::nullopt);
  CHECK(c.line("PING", 300ms) == std::nullopt);  // damaged: silent
  CHECK(proxy.damaged() == 1);
  l.on_loop([&] { proxy.close(); });
}

// The sanitizers' runtime opens descriptors of its own as it checks (a symbolizer's pipe, /proc reads): a
// process left with none makes it report what it could not check. This case is built in the plain trees only.
#if defined(__SANITIZE_ADDRESS__)
#define ADMITSIM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ADMITSIM_SANITIZED 1
#endif
#endif

#ifndef ADMITSIM_SANITIZED
TEST_CASE("a link that runs out of file descriptors says so, once", "[confirm][redis]") {
  redis_server s("redis-server", persistence::none);
  loop l;
  std::promise<std::string> failure;
  int failures = 0;
  link_proxy proxy(l.io.get_executor(), s.port(), link_proxy::delays{}, [&](const std::string& why) {
    if (++failures == 1) failure.set_value(why);
  });
  auto told = failure.get_future();
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
  std::vector<int> held;
  {
    // The clients' sockets first; then no descriptor is left to the process (the limit at its lowest free
    // one), and as they connect the link's accept finds none.
    for (int i = 0; i < 4; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      REQUIRE(fd >= 0);
      held.push_back(fd);
    }
    const int lowest_free = ::open("/dev/null", O_RDONLY);
    REQUIRE(lowest_free >= 0);
    ::close(lowest_free);
    rlimit none_left = before;
    none_left.rlim_cur = static_cast<rlim_t>(lowest_free);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &none_left) == 0);
    for (const int fd : held) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(proxy.port());
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      (void)::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);  // the kernel's backlog completes it
    }
  }
  const bool heard = told.wait_for(5s) == std::future_status::ready;
  for (const int fd : held) ::close(fd);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &before) == 0);
  REQUIRE(heard);
  CHECK(told.get().find("cannot accept a worker's connection") != std::string::npos);
  l.on_loop([&] { proxy.close(); });
  CHECK(failures == 1);
}
#endif

TEST_CASE("a held link keeps what is sent until it is released: a restart loses nothing sent meanwhile",
          "[confirm][redis]") {
  redis_server s("redis-server", persistence::none);
  loop l;
  link_proxy proxy(l.io.get_executor(), s.port(), link_proxy::delays{});
  client c(proxy.port());
  REQUIRE(c.line("PING") == std::optional<std::string>("+PONG"));
  l.on_loop([&] { proxy.hold(); });
  s.crash();
  std::promise<std::optional<std::string>> answer;
  std::thread asker([&] { answer.set_value(c.line("SET k v", 3000ms)); });
  s.start(persistence::none);  // the server comes back while the request waits in the link
  std::this_thread::sleep_for(100ms);
  l.on_loop([&] { proxy.release(); });
  asker.join();
  CHECK(answer.get_future().get() == std::optional<std::string>("+OK"));
  CHECK(ask(s, "GET k") == std::optional<std::string>("v"));
  CHECK(proxy.damaged() == 0);
  l.on_loop([&] { proxy.close(); });
}

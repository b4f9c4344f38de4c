// link_proxy: a loopback TCP proxy of confirm's own, put between clients and
// a redis-server, that makes the simulated network real (docs/confirm.md):
// its latency, its partitions, a node's downtime and a failover's move to
// another server.
//
// Each connection a client opens to the proxy is carried to the upstream
// server on a connection of its own, opened at the client's first bytes. Each
// direction's bytes are held for that direction's delay, then written in
// order: the simulated one-way latency between a worker and Redis, or a
// replication link's lag. The model is the simulator's (sim/world/lease/network.hpp):
//   - while the link is cut (cut() .. heal(), nested cuts counted), every byte
//     either way is dropped, and so are the bytes still on their way when the
//     cut begins: a request or a reply is lost;
//   - a connection that lost a byte (or whose upstream closed while a reply was
//     awaited) is damaged: it stays open and silent, whatever comes after, until
//     its client closes it (a real client does at its call timeout), as a client
//     waits out its socket timeout in the simulator. It is never healed, since
//     its byte stream is no longer whole;
//   - an upstream that closes while no reply is awaited (a server that crashed,
//     or was replaced by a failover) costs the client nothing: the next request
//     opens a new upstream connection, to the server retarget() names by then,
//     as a client behind a virtual address would see it;
//   - a client's close closes its upstream once what it sent has been written.
// close() drops everything: the listening socket, every connection, every byte
// queued. What the proxy itself cannot do (accept a connection, or open one
// upstream, for want of a file descriptor) is no loss of the simulated
// network's: it is reported to `on_failure`, once, and the run that made it
// cannot be judged. The proxy runs on its executor's thread (no locks) and must outlive
// nothing: its handlers hold their connection, not the proxy, once close() ran.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace admit::confirm {

class link_proxy {
 public:
  struct delays {
    std::chrono::nanoseconds to_server{0};  // client -> upstream
    std::chrono::nanoseconds to_client{0};  // upstream -> client
  };
  // Listens on a free loopback port; connections go to 127.0.0.1:upstream_port. `on_failure` hears why the
  // proxy could not carry a connection (at most once).
  link_proxy(boost::asio::any_io_executor ex, std::uint16_t upstream_port, delays d,
             std::function<void(const std::string&)> on_failure = {});
  ~link_proxy();
  link_proxy(const link_proxy&) = delete;
  link_proxy& operator=(const link_proxy&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  void cut();
  void heal();
  bool is_cut() const noexcept { return cuts_ > 0; }
  // While held (hold() .. release(), nested holds counted), no upstream connection is opened and what
  // the clients send waits in the link: a server that restarts with no downtime (its start takes real
  // time the simulated restart does not) loses nothing sent meanwhile. hold() closes the upstream
  // connections that await nothing (they would reach the server that is gone); a request already
  // written to it is lost with it.
  void hold();
  void release();
  bool is_held() const noexcept { return holds_ > 0; }
  // Where new upstream connections go from now on.
  void retarget(std::uint16_t upstream_port) noexcept { upstream_port_ = upstream_port; }
  void close();

  // What it saw: connections accepted, and connections damaged (bytes lost).
  std::int64_t accepted() const noexcept { return accepted_; }
  std::int64_t damaged() const noexcept { return damaged_; }

  struct conn;  // one proxied connection (link_proxy.cpp)

 private:
  void accept();
  void failed(const std::string& why);

  boost::asio::any_io_executor ex_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::uint16_t upstream_port_ = 0;
  delays delays_;
  int cuts_ = 0;
  int holds_ = 0;
  bool closed_ = false;
  std::shared_ptr<bool> open_ = std::make_shared<bool>(true);  // what a pending accept's handler may read
  std::int64_t accepted_ = 0;
  std::int64_t damaged_ = 0;
  std::vector<std::weak_ptr<conn>> conns_;
  std::function<void(const std::string&)> on_failure_;
  bool failed_ = false;
};

}  // namespace admit::confirm

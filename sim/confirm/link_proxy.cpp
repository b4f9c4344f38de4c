#include "sim/confirm/link_proxy.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <array>
#include <deque>
#include <string>

#include "gate/admit_assert.hpp"

namespace admit::confirm {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

namespace {

constexpr std::size_t read_size = 16 * 1024;

}  // namespace

// One connection's two sockets and its two directions. Every handler holds the connection
// (shared_from_this) and checks `done` first: once the connection ended, what is still pending only unwinds.
struct link_proxy::conn : std::enable_shared_from_this<link_proxy::conn> {
  conn(asio::any_io_executor ex, link_proxy& p) : proxy(&p), client(ex), server(ex), to_server(ex), to_client(ex) {}

  // Bytes on their way one direction: when they may be written.
  struct chunk {
    steady::time_point due;
    std::string bytes;
  };
  // One direction: the bytes on their way, and the writer that delivers each once its delay is over.
  struct lane {
    explicit lane(asio::any_io_executor ex) : timer(std::move(ex)) {}
    std::deque<chunk> queue;
    asio::steady_timer timer;
    bool writing = false;  // an async_write under way
    bool waiting = false;  // a delay's timer under way
    bool idle() const { return queue.empty() && !writing && !waiting; }
    bool ready() const { return !queue.empty() && !writing && !waiting; }  // its front may be delivered
  };
  enum class side { server, client };  // where a lane's bytes go

  link_proxy* proxy;  // nullptr once the proxy closed (then `done` is true too)
  tcp::socket client;
  tcp::socket server;
  bool server_open = false;
  bool connecting = false;
  std::uint64_t server_generation = 0;  // an upstream connection's handlers act only on their own
  bool awaiting = false;                // bytes went upstream since the last that came back
  bool damaged = false;
  bool client_closed = false;  // the client's side ended: upstream closes once its queue is written
  bool done = false;
  lane to_server, to_client;
  std::array<char, read_size> client_buf{}, server_buf{};

  void start() { read_client(); }

  void damage() {
    if (damaged) return;
    damaged = true;
    to_server.queue.clear();
    to_client.queue.clear();
    if (proxy != nullptr) ++proxy->damaged_;
  }

  // The proxy is held: an upstream connection that awaits nothing is closed (its server is going away),
  // one with a request under way loses it.
  void on_hold() {
    if (done || !server_open) return;
    if (awaiting || to_server.writing) {
      server_lost();
      return;
    }
    boost::system::error_code ignored;
    server.close(ignored);
    server_open = false;
    ++server_generation;
  }

  // The proxy's cut began: bytes on their way are lost with it.
  void on_cut() {
    if (!to_server.queue.empty() || !to_client.queue.empty()) damage();
  }

  void end() {
    if (done) return;
    done = true;
    to_server.queue.clear();
    to_client.queue.clear();
    boost::system::error_code ignored;
    client.close(ignored);
    server.close(ignored);
    to_server.timer.cancel();
    to_client.timer.cancel();
  }

  bool cut() const { return proxy == nullptr || proxy->is_cut(); }

  void read_client() {
    client.async_read_some(asio::buffer(client_buf), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
      if (self->done) return;
      if (ec) {
        self->client_closed = true;
        if (self->to_server.idle()) self->end();
        return;
      }
      if (self->cut()) self->damage();
      if (!self->damaged) {
        self->to_server.queue.push_back({steady::now() + self->proxy->delays_.to_server, std::string(self->client_buf.data(), n)});
        self->awaiting = true;
        self->pump_server();
      }
      self->read_client();
    });
  }

  void read_server(std::uint64_t gen) {
    server.async_read_some(asio::buffer(server_buf), [self = shared_from_this(), gen](boost::system::error_code ec, std::size_t n) {
      if (self->done || gen != self->server_generation) return;
      if (ec) {
        self->server_lost();
        return;
      }
      if (self->cut()) self->damage();
      if (!self->damaged) {
        self->to_client.queue.push_back({steady::now() + self->proxy->delays_.to_client, std::string(self->server_buf.data(), n)});
        self->awaiting = false;
        self->pump_client();
      }
      self->read_server(gen);
    });
  }

  // The upstream connection ended (the server closed it, crashed, or a write failed).
  void server_lost() {
    boost::system::error_code ignored;
    server.close(ignored);
    server_open = false;
    connecting = false;
    ++server_generation;
    // A reply awaited, or a request not yet written, is lost: the client waits out its timeout.
    if (awaiting || !to_server.queue.empty()) damage();
    to_server.writing = false;
    if (client_closed) end();
  }

  void pump_server() {
    if (done || !to_server.ready()) {
      if (!done && client_closed && to_server.idle()) end();
      return;
    }
    if (!server_open) {
      if (connecting) return;
      if (proxy == nullptr || proxy->is_held()) return;  // (release() pumps it again)
      connecting = true;  // (a closed socket opens again to connect)
      const tcp::endpoint up(asio::ip::make_address("127.0.0.1"), proxy->upstream_port_);
      const std::uint64_t gen = server_generation;
      server.async_connect(up, [self = shared_from_this(), gen](boost::system::error_code ec) {
        if (self->done || gen != self->server_generation) return;
        self->connecting = false;
        if ((ec == boost::system::errc::too_many_files_open || ec == boost::system::errc::too_many_files_open_in_system) &&
            self->proxy != nullptr)
          self->proxy->failed("cannot open a connection to the server: " + ec.message());
        if (ec) {
          self->server_lost();  // refused: what it carried is lost
          return;
        }
        self->server_open = true;
        self->read_server(gen);
        self->pump_server();
      });
      return;
    }
    deliver(side::server);
  }

  void pump_client() {
    if (done || !to_client.ready()) return;
    deliver(side::client);
  }

  lane& lane_to(side s) { return s == side::server ? to_server : to_client; }
  void pump(side s) { s == side::server ? pump_server() : pump_client(); }

  // The same either way: waits out the front chunk's delay, writes it, and pumps the lane again. A write
  // that fails loses the upstream connection (server) or ends the connection (client: it is gone). An
  // upstream write acts only on the upstream connection it was made on.
  void deliver(side s) {
    lane& l = lane_to(s);
    ADMIT_ASSERT(!done && l.ready(), "a lane delivers one chunk at a time");
    const steady::time_point due = l.queue.front().due;
    if (due > steady::now()) {
      l.waiting = true;
      l.timer.expires_at(due);
      l.timer.async_wait([self = shared_from_this(), s](boost::system::error_code) {
        if (self->done) return;
        self->lane_to(s).waiting = false;
        self->pump(s);
      });
      return;
    }
    l.writing = true;
    const std::uint64_t gen = server_generation;
    asio::async_write(s == side::server ? server : client, asio::buffer(l.queue.front().bytes),
                      [self = shared_from_this(), s, gen](boost::system::error_code ec, std::size_t) {
                        if (self->done || (s == side::server && gen != self->server_generation)) return;
                        lane& written = self->lane_to(s);
                        written.writing = false;
                        if (ec) {
                          if (s == side::server)
                            self->server_lost();
                          else
                            self->end();
                          return;
                        }
                        if (!written.queue.empty()) written.queue.pop_front();
                        self->pump(s);
                      });
  }
};

link_proxy::link_proxy(asio::any_io_executor ex, std::uint16_t upstream_port, delays d,
                       std::function<void(const std::string&)> on_failure)
    : ex_(std::move(ex)), acceptor_(ex_), upstream_port_(upstream_port), delays_(d), on_failure_(std::move(on_failure)) {
  ADMIT_ASSERT(d.to_server.count() >= 0 && d.to_client.count() >= 0, "a link's delays are not negative");
  const tcp::endpoint any(asio::ip::make_address("127.0.0.1"), 0);
  acceptor_.open(any.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(any);
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  accept();
}

link_proxy::~link_proxy() { close(); }

void link_proxy::accept() {
  auto c = std::make_shared<conn>(ex_, *this);
  acceptor_.async_accept(c->client, [this, c, open = open_](boost::system::error_code ec) {
    if (!*open) {  // (`this` is touched only while the proxy is open: it may be gone once closed)
      c->end();
      return;
    }
    if (ec) {
      c->end();
      failed("cannot accept a worker's connection: " + ec.message());
      return;
    }
    ++accepted_;
    // Keep the live ones only.
    std::erase_if(conns_, [](const std::weak_ptr<conn>& w) { return w.expired(); });
    conns_.push_back(c);
    boost::system::error_code ignored;
    c->client.set_option(tcp::no_delay(true), ignored);
    c->start();
    accept();
  });
}

void link_proxy::failed(const std::string& why) {
  if (failed_) return;
  failed_ = true;
  if (on_failure_) on_failure_(why);
}

void link_proxy::cut() {
  ++cuts_;
  for (const auto& w : conns_)
    if (const auto c = w.lock()) c->on_cut();
}

void link_proxy::hold() {
  ++holds_;
  for (const auto& w : conns_)
    if (const auto c = w.lock()) c->on_hold();
}

void link_proxy::release() {
  ADMIT_ASSERT(holds_ > 0, "a release ends a hold");
  if (--holds_ > 0) return;
  for (const auto& w : conns_)
    if (const auto c = w.lock()) c->pump_server();
}

void link_proxy::heal() {
  ADMIT_ASSERT(cuts_ > 0, "a heal ends a cut");
  --cuts_;
}

void link_proxy::close() {
  if (closed_) return;
  closed_ = true;
  *open_ = false;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& w : conns_)
    if (const auto c = w.lock()) {
      c->end();
      c->proxy = nullptr;
    }
  conns_.clear();
}

}  // namespace admit::confirm

// resp_transport (gate/asio/resp_transport.hpp) without a Redis: the RESP2
// reader on whole, partial, nested and hostile replies, and the transport
// against loopback servers of the test's own that answer garbage or nothing,
// or take its subscriptions and push messages to it.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gate/asio/resp_transport.hpp"

namespace asio = boost::asio;
using namespace admit;
using namespace std::chrono_literals;
using gate::resp::parse_status;
using redis::reply;

namespace {

parse_status parse(std::string_view in, reply& out, std::size_t& used) { return gate::resp::parse(in, used, out); }

}  // namespace

TEST_CASE("the RESP2 reader reads every reply type and asks for more on a partial one", "[resp]") {
  // Goal: the reader's cases. Method: one reply of each type, then each cut short by one byte.
  const std::vector<std::pair<std::string, reply>> cases = {
      {"+OK\r\n", reply::status("OK")},
      {"-NOSCRIPT No matching script.\r\n", reply::error("NOSCRIPT No matching script.")},
      {":-42\r\n", reply::from_integer(-42)},
      {"$5\r\nw0-1x\r\n", reply::bulk("w0-1x")},
      {"$0\r\n\r\n", reply::bulk("")},
      {"$-1\r\n", reply::nil()},
      {"*-1\r\n", reply::nil()},
      {"*2\r\n:1\r\n*1\r\n$2\r\nab\r\n", reply::array({reply::from_integer(1), reply::array({reply::bulk("ab")})})},
  };
  for (const auto& [wire, want] : cases) {
    reply got;
    std::size_t used = 0;
    REQUIRE(parse(wire + "+next\r\n", got, used) == parse_status::complete);
    CHECK(got == want);
    CHECK(used == wire.size());
    CHECK(parse(wire.substr(0, wire.size() - 1), got, used) == parse_status::need_more);
  }
  CHECK(gate::resp::encode(std::vector<std::string>{"GET", "k"}) == "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
}

TEST_CASE("the RESP2 reader refuses what is not RESP2 or passes its limits", "[resp]") {
  // Goal: hostile replies are refused, never trusted. Method: bad types, numbers, framing and sizes.
  std::string deep;
  for (std::size_t i = 0; i <= gate::resp_depth_max; ++i) deep += "*1\r\n";
  deep += ":1\r\n";
  const std::vector<std::string> bad = {
      "?x\r\n", ":12a\r\n", ":\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "*-5\r\n", "\r\n",
      "$" + std::to_string(gate::resp_bulk_bytes_max + 1) + "\r\n",
      "*" + std::to_string(gate::resp_elements_max + 1) + "\r\n", deep,
      "+" + std::string(gate::resp_line_bytes_max + 2, 'x'),
  };
  for (const std::string& wire : bad) {
    reply got;
    std::size_t used = 0;
    INFO(wire.substr(0, 40));
    CHECK(parse(wire, got, used) == parse_status::malformed);
  }
}

namespace {

// A loopback server that reads one command and answers `answer` (nothing, when empty), then stays open.
struct fake_server {
  asio::ip::tcp::acceptor acceptor;
  asio::ip::tcp::socket peer;
  std::string request = std::string(64, '\0');

  fake_server(asio::io_context& io, std::string answer)
      : acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), peer(io) {
    acceptor.async_accept(peer, [this, answer](boost::system::error_code ec) {
      if (ec) return;
      peer.async_read_some(asio::buffer(request), [this, answer](boost::system::error_code rec, std::size_t) {
        if (rec || answer.empty()) return;
        asio::write(peer, asio::buffer(answer));
      });
    });
  }
};

// One call of `argv` to the server listening at `at` on `io`, with a call timeout of 100 ms (5 s at most).
boost::system::error_code call_at(asio::io_context& io, const asio::ip::tcp::endpoint& at, std::vector<std::string> argv,
                                  reply& got) {
  gate::resp_transport t(io.get_executor(), at, 100ms);
  gate::command_request req;
  req.argv = std::move(argv);
  boost::system::error_code result = asio::error::would_block;
  t.async_command(req, [&](boost::system::error_code ec, reply r) {
    result = ec;
    got = std::move(r);
    io.stop();
  });
  io.run_for(5s);
  return result;
}

boost::system::error_code call_once(const std::string& answer, reply& got) {
  asio::io_context io;
  fake_server server(io, answer);
  return call_at(io, server.acceptor.local_endpoint(), {"PING"}, got);
}

}  // namespace

TEST_CASE("the transport reads a reply, times out on silence and refuses garbage", "[resp]") {
  // Goal: the transport's three outcomes. Method: servers that answer +PONG, nothing, and a line not RESP2.
  reply got;
  CHECK(!call_once("+PONG\r\n", got));
  CHECK(got == reply::status("PONG"));
  CHECK(call_once("", got) == asio::error::timed_out);
  CHECK(call_once("HTTP/1.1 400 Bad Request\r\n", got) == boost::system::errc::protocol_error);
}

namespace {

// A loopback server that reads one command and answers `answer` `late` after it came.
struct late_server {
  asio::ip::tcp::acceptor acceptor;
  asio::ip::tcp::socket peer;
  asio::steady_timer timer;
  std::string request = std::string(64, '\0');

  late_server(asio::io_context& io, std::string answer, std::chrono::milliseconds late)
      : acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), peer(io), timer(io) {
    acceptor.async_accept(peer, [this, answer, late](boost::system::error_code ec) {
      if (ec) return;
      peer.async_read_some(asio::buffer(request), [this, answer, late](boost::system::error_code rec, std::size_t) {
        if (rec) return;
        timer.expires_after(late);
        timer.async_wait([this, answer](boost::system::error_code) { asio::write(peer, asio::buffer(answer)); });
      });
    });
  }
};

boost::system::error_code call_late(std::vector<std::string> argv, reply& got) {
  asio::io_context io;
  late_server server(io, ":1\r\n", 250ms);
  return call_at(io, server.acceptor.local_endpoint(), std::move(argv), got);
}

}  // namespace

TEST_CASE("a WAIT is waited for past its own timeout, any other command its call timeout", "[resp]") {
  // Goal: WAIT blocks at the server up to its timeout, so the transport waits for its answer that long
  // past its call timeout (as the simulated network times it); other commands get the call timeout alone.
  // Method: a server that answers 250 ms late, a call timeout of 100 ms.
  using gate::resp_transport;
  CHECK(resp_transport::wait_blocks({"WAIT", "1", "300"}) == 300ms);
  CHECK(resp_transport::wait_blocks({"wait", "1", "300"}) == 300ms);
  CHECK(resp_transport::wait_blocks({"WAIT", "1", "0"}) == 0ms);  // blocks for ever: the call timeout alone
  CHECK(resp_transport::wait_blocks({"WAIT", "1", "3x"}) == 0ms);
  CHECK(resp_transport::wait_blocks({"WAIT", "1", "86400001"}) == 0ms);
  CHECK(resp_transport::wait_blocks({"WAIT", "1"}) == 0ms);
  CHECK(resp_transport::wait_blocks({"WAITAOF", "1", "1", "300"}) == 0ms);
  CHECK(resp_transport::wait_blocks({"GET", "1", "300"}) == 0ms);
  reply got;
  CHECK(!call_late({"WAIT", "1", "300"}, got));
  CHECK(got == reply::from_integer(1));
  CHECK(call_late({"WAIT", "1", "100"}, got) == asio::error::timed_out);
  CHECK(call_late({"PING"}, got) == asio::error::timed_out);
}

namespace {

// A loopback server that accepts every connection, keeps what each sent, and
// writes what the test gives it.
struct pubsub_server {
  struct peer {
    explicit peer(const asio::any_io_executor& ex) : socket(ex) {}
    asio::ip::tcp::socket socket;
    std::string received;
    bool ended = false;  // the client closed it (or it failed)
    std::array<char, 512> chunk{};
  };
  asio::ip::tcp::acceptor acceptor;
  std::unique_ptr<peer> next;
  std::vector<std::unique_ptr<peer>> peers;

  explicit pubsub_server(asio::io_context& io)
      : acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept();
  }
  void accept() {
    next = std::make_unique<peer>(acceptor.get_executor());
    acceptor.async_accept(next->socket, [this](boost::system::error_code ec) {
      if (ec) return;
      peers.push_back(std::move(next));
      read(*peers.back());
      accept();
    });
  }
  void read(peer& p) {
    p.socket.async_read_some(asio::buffer(p.chunk), [this, &p](boost::system::error_code ec, std::size_t n) {
      if (ec) {
        p.ended = true;
        return;
      }
      p.received.append(p.chunk.data(), n);
      read(p);
    });
  }
  void push(std::size_t i, const std::string& wire) { asio::write(peers.at(i)->socket, asio::buffer(wire)); }
};

std::string wire(std::vector<std::string> argv) { return gate::resp::encode(argv); }

// A push as RESP2 carries it: [kind, channel, payload].
std::string push_of(const std::string& kind, const std::string& channel, const std::string& payload) {
  return "*3\r\n$" + std::to_string(kind.size()) + "\r\n" + kind + "\r\n$" + std::to_string(channel.size()) + "\r\n" +
         channel + "\r\n$" + std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
}

// A confirmation as RESP2 carries it: [kind, channel, count].
std::string confirmation_of(const std::string& kind, const std::string& channel, int count) {
  return "*3\r\n$" + std::to_string(kind.size()) + "\r\n" + kind + "\r\n$" + std::to_string(channel.size()) + "\r\n" +
         channel + "\r\n:" + std::to_string(count) + "\r\n";
}

// Runs `io` until `done()` holds, for at most 5s; whether it holds.
// (An io_context that ran out of work stops; it is restarted, so that what is posted later runs.)
template <class Done>
bool run_until(asio::io_context& io, Done done) {
  for (int i = 0; i < 500 && !done(); ++i) {
    io.restart();
    io.run_for(10ms);
  }
  return done();
}

// Lets whatever is under way land (a write that should not come has its chance to).
void settle(asio::io_context& io) {
  io.restart();
  io.run_for(50ms);
}

}  // namespace

TEST_CASE("listeners share one subscription per channel and hear only its messages", "[resp][subscribe]") {
  // Goal: the listener counts and the dispatch. Method: two listeners on one channel (plain, then shard)
  // against a fake server: one SUBSCRIBE; a push for another channel and one of the other kind reach
  // neither, a push for theirs reaches both; the first to leave writes nothing, the last UNSUBSCRIBE.
  for (const bool sharded : {false, true}) {
    INFO("sharded " << sharded);
    const std::string subscribe = sharded ? "SSUBSCRIBE" : "SUBSCRIBE";
    const std::string unsubscribe = sharded ? "SUNSUBSCRIBE" : "UNSUBSCRIBE";
    const std::string kind = sharded ? "smessage" : "message";
    const std::string other_kind = sharded ? "message" : "smessage";
    asio::io_context io;
    pubsub_server server(io);
    gate::resp_transport t(io.get_executor(), server.acceptor.local_endpoint(), 100ms);
    int heard_a = 0, heard_b = 0;
    std::optional<gate::resp_transport::subscription> a, b;
    a.emplace(t.subscribe("k:free", sharded, [&] { ++heard_a; }));
    b.emplace(t.subscribe("k:free", sharded, [&] { ++heard_b; }));
    REQUIRE(run_until(io, [&] { return !server.peers.empty() && !server.peers[0]->received.empty(); }));
    settle(io);
    REQUIRE(server.peers.size() == 1);
    CHECK(server.peers[0]->received == wire({subscribe, "k:free"}));

    server.push(0, confirmation_of(sharded ? "ssubscribe" : "subscribe", "k:free", 1));
    server.push(0, push_of(kind, "k:other", "free"));
    server.push(0, push_of(other_kind, "k:free", "free"));
    server.push(0, push_of(kind, "k:free", "free"));
    REQUIRE(run_until(io, [&] { return heard_a > 0 && heard_b > 0; }));
    settle(io);
    CHECK(heard_a == 1);
    CHECK(heard_b == 1);

    a.reset();
    settle(io);
    CHECK(server.peers[0]->received == wire({subscribe, "k:free"}));
    b.reset();
    REQUIRE(run_until(io, [&] { return server.peers[0]->received.size() > wire({subscribe, "k:free"}).size(); }));
    settle(io);
    CHECK(server.peers[0]->received == wire({subscribe, "k:free"}) + wire({unsubscribe, "k:free"}));
    // Gone listeners hear nothing more.
    server.push(0, push_of(kind, "k:free", "free"));
    settle(io);
    CHECK(heard_a == 1);
    CHECK(heard_b == 1);
    CHECK(server.peers.size() == 1);
    CHECK_FALSE(server.peers[0]->ended);
  }
}

TEST_CASE("a subscriber connection that sends garbage is closed and its listeners hear nothing", "[resp][subscribe]") {
  // Goal: hostile input ends the subscriber connection, never the program, and the next subscribe reopens it.
  // Method: after the SUBSCRIBEs the fake server sends a line that is not RESP2, a reply that is no push, or a
  // message of two elements, then a good message: the connection ends and nobody hears it. A subscription ended
  // after the failure writes nothing; a new one opens a second connection that subscribes every channel still
  // listened to, and a message there is heard.
  const std::vector<std::string> garbage = {"HTTP/1.1 400 Bad Request\r\n", ":1\r\n", "*2\r\n$7\r\nmessage\r\n$6\r\nk:free\r\n"};
  for (const std::string& bad : garbage) {
    INFO(bad);
    asio::io_context io;
    pubsub_server server(io);
    gate::resp_transport t(io.get_executor(), server.acceptor.local_endpoint(), 100ms);
    int heard = 0, heard_gone = 0, heard_other = 0;
    std::optional<gate::resp_transport::subscription> a, gone, other;
    a.emplace(t.subscribe("k:free", false, [&] { ++heard; }));
    gone.emplace(t.subscribe("k:gone", false, [&] { ++heard_gone; }));
    const std::string first = wire({"SUBSCRIBE", "k:free"}) + wire({"SUBSCRIBE", "k:gone"});
    REQUIRE(run_until(io, [&] { return !server.peers.empty() && server.peers[0]->received == first; }));
    server.push(0, bad + push_of("message", "k:free", "free") + push_of("message", "k:gone", "free"));
    REQUIRE(run_until(io, [&] { return server.peers[0]->ended; }));
    settle(io);
    CHECK(heard == 0);
    CHECK(heard_gone == 0);
    gone.reset();  // after its connection failed
    settle(io);
    CHECK(server.peers.size() == 1);

    other.emplace(t.subscribe("k:other", false, [&] { ++heard_other; }));
    const std::string second = wire({"SUBSCRIBE", "k:free"}) + wire({"SUBSCRIBE", "k:other"});
    REQUIRE(run_until(io, [&] { return server.peers.size() == 2 && server.peers[1]->received.size() >= second.size(); }));
    CHECK(server.peers[1]->received == second);
    server.push(1, push_of("message", "k:free", "free"));
    REQUIRE(run_until(io, [&] { return heard == 1; }));
    CHECK(heard_other == 0);
    CHECK(heard_gone == 0);
  }
}

TEST_CASE("a subscriber that cannot connect hears nothing and its subscription ends quietly", "[resp][subscribe]") {
  // Goal: a refused connection is no failure of subscribe. Method: a loopback port with nothing listening; a
  // subscription made before the transport is destroyed and ended after.
  asio::io_context io;
  asio::ip::tcp::acceptor closed(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const asio::ip::tcp::endpoint nowhere = closed.local_endpoint();
  closed.close();
  int heard = 0;
  std::optional<gate::resp_transport> t;
  t.emplace(io.get_executor(), nowhere, 100ms);
  std::optional<gate::resp_transport::subscription> a;
  a.emplace(t->subscribe("k:free", true, [&] { ++heard; }));
  settle(io);
  std::optional<gate::resp_transport::subscription> b;
  b.emplace(t->subscribe("k:free", true, [&] { ++heard; }));  // tries again
  settle(io);
  b.reset();
  t.reset();
  a.reset();
  io.restart();
  io.run_for(1s);
  CHECK(io.stopped());  // nothing of the transport was left to run
  CHECK(heard == 0);
}

TEST_CASE("the subscriber connection selects its database before it subscribes", "[resp][subscribe]") {
  // Goal: the SELECT rule of calls holds for listening. Method: database 9; the fake server sees SELECT 9 alone
  // until it answers. +OK: the SSUBSCRIBE follows; an error: the connection ends.
  for (const std::string answer : {"+OK\r\n", "-ERR DB index is out of range\r\n"}) {
    INFO(answer);
    asio::io_context io;
    pubsub_server server(io);
    gate::resp_transport t(io.get_executor(), server.acceptor.local_endpoint(), 1s, 9);
    const auto a = t.subscribe("k:free", true, [] {});
    REQUIRE(run_until(io, [&] { return !server.peers.empty() && !server.peers[0]->received.empty(); }));
    settle(io);
    CHECK(server.peers[0]->received == wire({"SELECT", "9"}));
    server.push(0, answer);
    if (answer == "+OK\r\n") {
      REQUIRE(run_until(io, [&] { return server.peers[0]->received.size() > wire({"SELECT", "9"}).size(); }));
      settle(io);
      CHECK(server.peers[0]->received == wire({"SELECT", "9"}) + wire({"SSUBSCRIBE", "k:free"}));
      CHECK_FALSE(server.peers[0]->ended);
    } else {
      REQUIRE(run_until(io, [&] { return server.peers[0]->ended; }));
      CHECK(server.peers[0]->received == wire({"SELECT", "9"}));
    }
  }
}

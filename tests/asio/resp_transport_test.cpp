// resp_transport (gate/asio/resp_transport.hpp) without a Redis: the RESP2
// reader on whole, partial, nested and hostile replies, and the transport
// against loopback servers of the test's own that answer garbage or nothing.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/read.hpp>
#include <chrono>
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

boost::system::error_code call_once(const std::string& answer, reply& got) {
  asio::io_context io;
  fake_server server(io, answer);
  gate::resp_transport t(io.get_executor(), server.acceptor.local_endpoint(), 100ms);
  gate::command_request req;
  req.argv = {"PING"};
  boost::system::error_code result;
  t.async_command(req, [&](boost::system::error_code ec, reply r) {
    result = ec;
    got = std::move(r);
    io.stop();
  });
  io.run_for(5s);
  return result;
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

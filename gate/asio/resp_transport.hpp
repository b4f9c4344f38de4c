// resp_transport: the lease client's transport to a real Redis, over one TCP
// connection speaking RESP2, on a real Asio executor.
//
// Model. Calls run one at a time, in the order they were made (a renewal
// that starts while a release is on the wire waits its turn): each writes
// its command as a RESP array of bulk strings and reads one reply. The
// connection is opened by the first call (and SELECT `database` sent when
// it is not 0) and reopened by the first call after it failed. A call that
// gets no whole reply within its timeout (the request's timeout_ns: 0 for
// none; -1, the default, for `call_timeout`) completes with
// asio::error::timed_out and closes the connection: a late reply would
// otherwise be read as the answer to the next call. A reply the parser
// cannot read (not RESP2, or past its limits) completes the call with
// errc::protocol_error and closes the connection too. As for every lease
// transport, an error code means the command may or may not have run.
//
// What it does not do yet: pub/sub wake-ups (no subscribe: lease_client
// refuses a protocol with `wake_on` on it).
//
// Limits on what the server sends (hostile input is refused, never trusted):
// a reply nests at most resp_depth_max arrays, a bulk string holds at most
// resp_bulk_bytes_max bytes, an array at most resp_elements_max elements, a
// simple line at most resp_line_bytes_max bytes.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/errc.hpp>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/lease/client_config.hpp"
#include "gate/redis/reply.hpp"

namespace admit::gate {

inline constexpr std::size_t resp_depth_max = 8;
inline constexpr std::int64_t resp_bulk_bytes_max = std::int64_t{64} << 20;  // 64 MiB
inline constexpr std::int64_t resp_elements_max = 1 << 20;
inline constexpr std::size_t resp_line_bytes_max = 64 << 10;  // 64 KiB

namespace resp {

// The command as RESP2 sends it: an array of bulk strings.
inline std::string encode(std::span<const std::string> argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
  return out;
}

enum class parse_status : std::uint8_t { complete, need_more, malformed };

// Reads one reply from the front of `in` into `out`. complete: `used` bytes
// were the reply; need_more: `in` holds only part of it; malformed: `in`
// is not RESP2, or the reply passes a limit.
inline parse_status parse(std::string_view in, std::size_t& used, redis::reply& out, std::size_t depth = 0) {
  used = 0;
  const std::size_t eol = in.find("\r\n");
  if (eol == std::string_view::npos) return in.size() > resp_line_bytes_max ? parse_status::malformed : parse_status::need_more;
  if (eol == 0 || eol > resp_line_bytes_max) return parse_status::malformed;
  const char type = in[0];
  const std::string_view line = in.substr(1, eol - 1);
  const std::size_t head = eol + 2;
  const auto number = [&line](std::int64_t& v) {
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    return ec == std::errc{} && end == line.data() + line.size();
  };
  std::int64_t n = 0;
  switch (type) {
    case '+':
      out = redis::reply::status(std::string(line));
      used = head;
      return parse_status::complete;
    case '-':
      out = redis::reply::error(std::string(line));
      used = head;
      return parse_status::complete;
    case ':':
      if (!number(n)) return parse_status::malformed;
      out = redis::reply::from_integer(n);
      used = head;
      return parse_status::complete;
    case '$': {
      if (!number(n) || n < -1 || n > resp_bulk_bytes_max) return parse_status::malformed;
      if (n == -1) {
        out = redis::reply::nil();
        used = head;
        return parse_status::complete;
      }
      const auto len = static_cast<std::size_t>(n);
      if (in.size() < head + len + 2) return parse_status::need_more;
      if (in.substr(head + len, 2) != "\r\n") return parse_status::malformed;
      out = redis::reply::bulk(std::string(in.substr(head, len)));
      used = head + len + 2;
      return parse_status::complete;
    }
    case '*': {
      if (!number(n) || n < -1 || n > resp_elements_max) return parse_status::malformed;
      if (n == -1) {
        out = redis::reply::nil();
        used = head;
        return parse_status::complete;
      }
      if (depth + 1 > resp_depth_max) return parse_status::malformed;
      std::vector<redis::reply> elements;
      std::size_t at = head;
      for (std::int64_t i = 0; i < n; ++i) {
        std::size_t one = 0;
        redis::reply e;
        const parse_status s = parse(in.substr(at), one, e, depth + 1);
        if (s != parse_status::complete) return s;
        ADMIT_ASSERT(one > 0, "a complete element takes at least its own line");
        at += one;
        elements.push_back(std::move(e));
      }
      out = redis::reply::array(std::move(elements));
      used = at;
      return parse_status::complete;
    }
    default:
      return parse_status::malformed;
  }
}

}  // namespace resp

class resp_transport {
 public:
  using executor_type = boost::asio::any_io_executor;

  resp_transport(executor_type ex, boost::asio::ip::tcp::endpoint server,
                 std::chrono::nanoseconds call_timeout = std::chrono::seconds(1), std::int64_t database = 0)
      : ex_(std::move(ex)), server_(server), call_timeout_(call_timeout), database_(database), socket_(ex_) {
    ADMIT_ASSERT(call_timeout_.count() > 0, "a call has a positive timeout");
    ADMIT_ASSERT(database_ >= 0, "a database number is not negative");
  }
  resp_transport(const resp_transport&) = delete;
  resp_transport& operator=(const resp_transport&) = delete;

  // One command; completes with (error_code, redis::reply).
  template <class Token>
  auto async_command(const command_request& req, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, redis::reply)>(
        [this](auto handler, std::string wire, std::int64_t timeout_ns) {
          // The request's own timeout (0: none), or the transport's.
          const std::chrono::nanoseconds timeout = timeout_ns < 0 ? call_timeout_ : std::chrono::nanoseconds(timeout_ns);
          boost::asio::co_spawn(ex_, call(std::move(wire), timeout),
                                [h = std::move(handler)](std::exception_ptr e, result r) mutable {
                                  if (e) {
                                    // Not expected (the call catches nothing it throws): report it as a failed call.
                                    std::move(h)(make_error_code(boost::system::errc::io_error), redis::reply{});
                                    return;
                                  }
                                  std::move(h)(std::get<0>(r), std::move(std::get<1>(r)));
                                });
        },
        token, resp::encode(req.argv), req.timeout_ns);
  }

  bool connected() const noexcept { return socket_.is_open(); }

 private:
  using result = std::tuple<boost::system::error_code, redis::reply>;
  template <class T>
  using awaitable = boost::asio::awaitable<T, executor_type>;

  // Waits until no other call runs (calls go in the order they were made).
  awaitable<void> take_turn() {
    if (!busy_) {
      busy_ = true;
      co_return;
    }
    boost::asio::steady_timer wake(ex_, boost::asio::steady_timer::time_point::max());
    waiting_.push_back(&wake);
    (void)co_await wake.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable_t<executor_type>{}));
    ADMIT_ASSERT(busy_, "a call handed the turn leaves it taken");
  }
  void hand_turn() {
    ADMIT_ASSERT(busy_, "only the call that runs hands the turn on");
    if (waiting_.empty()) {
      busy_ = false;
      return;
    }
    boost::asio::steady_timer* next = waiting_.front();
    waiting_.pop_front();
    next->cancel();
  }
  struct turn {
    resp_transport& t;
    ~turn() { t.hand_turn(); }
  };

  awaitable<result> call(std::string wire, std::chrono::nanoseconds timeout) {
    co_await take_turn();
    const turn holding{*this};
    if (!socket_.is_open()) {
      if (const boost::system::error_code ec = co_await connect()) co_return result{ec, redis::reply{}};
    }
    co_return co_await exchange(wire, timeout);
  }

  awaitable<boost::system::error_code> connect() {
    using boost::asio::as_tuple;
    const boost::asio::use_awaitable_t<executor_type> use;
    buffer_.clear();
    auto timed_out = std::make_shared<bool>(false);
    boost::asio::steady_timer timer(ex_, call_timeout_);
    timer.async_wait([this, timed_out](boost::system::error_code ec) {
      if (ec) return;
      *timed_out = true;
      boost::system::error_code ignored;
      socket_.close(ignored);
    });
    auto [ec] = co_await socket_.async_connect(server_, as_tuple(use));
    timer.cancel();
    if (*timed_out) ec = boost::asio::error::timed_out;
    if (ec) {
      boost::system::error_code ignored;
      socket_.close(ignored);
      co_return ec;
    }
    if (database_ != 0) {
      const std::vector<std::string> select{"SELECT", std::to_string(database_)};
      auto [sec, answer] = co_await exchange(resp::encode(select), call_timeout_);
      if (!sec && answer.is_error()) sec = make_error_code(boost::system::errc::invalid_argument);
      co_return sec;
    }
    co_return boost::system::error_code{};
  }

  // Writes one command and reads its reply, within `timeout` (0: no limit).
  awaitable<result> exchange(const std::string& wire, std::chrono::nanoseconds timeout) {
    using boost::asio::as_tuple;
    const boost::asio::use_awaitable_t<executor_type> use;
    auto timed_out = std::make_shared<bool>(false);
    boost::asio::steady_timer timer(ex_);
    if (timeout.count() > 0) timer.expires_after(timeout);
    else timer.expires_at(boost::asio::steady_timer::time_point::max());
    timer.async_wait([this, timed_out](boost::system::error_code ec) {
      if (ec) return;
      *timed_out = true;
      boost::system::error_code ignored;
      socket_.close(ignored);
    });
    const auto fail = [&](boost::system::error_code ec) {
      timer.cancel();
      boost::system::error_code ignored;
      socket_.close(ignored);
      return result{*timed_out ? boost::asio::error::timed_out : ec, redis::reply{}};
    };
    auto [wec, written] = co_await boost::asio::async_write(socket_, boost::asio::buffer(wire), as_tuple(use));
    if (wec) co_return fail(wec);
    for (;;) {
      std::size_t used = 0;
      redis::reply answer;
      const resp::parse_status s = resp::parse(buffer_, used, answer);
      if (s == resp::parse_status::complete) {
        buffer_.erase(0, used);
        timer.cancel();
        co_return result{boost::system::error_code{}, std::move(answer)};
      }
      if (s == resp::parse_status::malformed) co_return fail(make_error_code(boost::system::errc::protocol_error));
      chunk_.resize(4096);
      auto [rec, n] = co_await socket_.async_read_some(boost::asio::buffer(chunk_), as_tuple(use));
      if (rec) co_return fail(rec);
      buffer_.append(chunk_.data(), n);
    }
  }

  executor_type ex_;
  boost::asio::ip::tcp::endpoint server_;
  std::chrono::nanoseconds call_timeout_;
  std::int64_t database_;
  boost::asio::ip::tcp::socket socket_;
  std::string buffer_;  // bytes read and not yet parsed
  std::string chunk_;   // one read's bytes
  bool busy_ = false;
  std::deque<boost::asio::steady_timer*> waiting_;
};

}  // namespace admit::gate

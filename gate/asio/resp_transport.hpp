// resp_transport: the lease client's transport to a real Redis, over one TCP
// connection speaking RESP2, on a real Asio executor.
//
// Model. Calls run one at a time, in the order they were made (a renewal
// that starts while a release is on the wire waits its turn): each writes
// its command as a RESP array of bulk strings and reads one reply. The
// connection is opened by the first call (and SELECT `database` sent when
// it is not 0) and reopened by the first call after it failed. A call that
// gets no whole reply within its timeout (the request's timeout_ns: 0 for
// none; -1, the default, for `call_timeout`, and for a WAIT that plus its own
// timeout, which it may block for at the server) completes with
// asio::error::timed_out and closes the connection: a late reply would
// otherwise be read as the answer to the next call. A reply the parser
// cannot read (not RESP2, or past its limits) completes the call with
// errc::protocol_error and closes the connection too. As for every lease
// transport, an error code means the command may or may not have run.
//
// Listening (a protocol's wake_on). RESP2 carries no ordinary command on a
// connection in subscribe mode, so listeners share a second connection,
// opened by the first subscribe (SELECT first, as for calls) and kept. Each
// (sharded, channel) counts its listeners: SUBSCRIBE (SSUBSCRIBE for a shard
// channel) goes out when the first arrives, UNSUBSCRIBE (SUNSUBSCRIBE) when
// the last leaves. A reader on it takes the pushes: a `message` (`smessage`)
// is posted to every listener of that plain (shard) channel; confirmations
// are accepted. When that connection fails (refused, reset, or the server
// sends what is not a push) it is closed and its listeners hear nothing, as
// if a message were lost: their waits end at their timers. The next
// subscribe opens a new one and subscribes every channel still listened to.
// The transport's destructor closes it (until then its pending read keeps
// the io_context running).
//
// Limits on what the server sends (hostile input is refused, never trusted):
// a reply nests at most resp_depth_max arrays, a bulk string holds at most
// resp_bulk_bytes_max bytes, an array at most resp_elements_max elements, a
// simple line at most resp_line_bytes_max bytes; on the subscriber
// connection a push takes at most resp_push_bytes_max bytes, and at most
// resp_outbound_max commands wait to be written (a server that reads none).
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
#include <functional>
#include <map>
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
inline constexpr std::size_t resp_push_bytes_max = 1 << 20;     // 1 MiB
inline constexpr std::size_t resp_outbound_max = 1024;

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
  struct listener_hub;                               // the subscriber connection and its listeners (below)
  using channel_key = std::pair<bool, std::string>;  // (sharded, channel)

 public:
  using executor_type = boost::asio::any_io_executor;

  resp_transport(executor_type ex, boost::asio::ip::tcp::endpoint server,
                 std::chrono::nanoseconds call_timeout = std::chrono::seconds(1), std::int64_t database = 0)
      : ex_(std::move(ex)), server_(server), call_timeout_(call_timeout), database_(database), socket_(ex_),
        hub_(std::make_shared<listener_hub>(ex_, server_, call_timeout_, database_)) {
    ADMIT_ASSERT(call_timeout_.count() > 0, "a call has a positive timeout");
    ADMIT_ASSERT(database_ >= 0, "a database number is not negative");
  }
  resp_transport(const resp_transport&) = delete;
  resp_transport& operator=(const resp_transport&) = delete;
  // Closes the subscriber connection: its reader ends (the hub lives on while a coroutine or a
  // subscription still holds it).
  ~resp_transport() { hub_->close(); }

  // A listener on one channel, until it is destroyed. It holds the hub weakly: it may outlive the
  // transport and any connection.
  class subscription {
   public:
    subscription(subscription&& o) noexcept : hub_(std::move(o.hub_)), key_(std::move(o.key_)), id_(o.id_) {}
    subscription(const subscription&) = delete;
    subscription& operator=(const subscription&) = delete;
    subscription& operator=(subscription&&) = delete;
    ~subscription() {
      if (const std::shared_ptr<listener_hub> h = hub_.lock()) h->remove(key_, id_);
    }

   private:
    friend class resp_transport;
    subscription(std::weak_ptr<listener_hub> hub, channel_key key, std::uint64_t id) noexcept
        : hub_(std::move(hub)), key_(std::move(key)), id_(id) {}
    std::weak_ptr<listener_hub> hub_;  // empty once moved from
    channel_key key_;
    std::uint64_t id_;
  };

  // Listens on `channel` (a shard channel when `sharded`) while the returned
  // subscription lives: each message on it posts `on_message` to the
  // executor. It never fails: a listener whose connection cannot be opened,
  // or fails later, hears nothing.
  subscription subscribe(std::string channel, bool sharded, std::function<void()> on_message) {
    ADMIT_ASSERT(static_cast<bool>(on_message), "a listener has something to call");
    channel_key key{sharded, std::move(channel)};
    const std::uint64_t id = hub_->add(key, std::move(on_message));
    return subscription(hub_, std::move(key), id);
  }

  // One command; completes with (error_code, redis::reply).
  template <class Token>
  auto async_command(const command_request& req, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, redis::reply)>(
        [this](auto handler, std::string wire, std::int64_t timeout_ns, std::chrono::nanoseconds blocks) {
          // The request's own timeout (0: none), or the transport's, past what a WAIT blocks for (as the
          // simulated network times a WAIT: sim/world/lease/network.hpp).
          const std::chrono::nanoseconds timeout =
              timeout_ns < 0 ? call_timeout_ + blocks : std::chrono::nanoseconds(timeout_ns);
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
        token, resp::encode(req.argv), req.timeout_ns, wait_blocks(req.argv));
  }

  // How long `WAIT numreplicas timeout` may block at the server: its timeout (0 for any other command; a
  // WAIT whose timeout is not a positive number of milliseconds, up to a day, is timed as any command).
  static std::chrono::nanoseconds wait_blocks(const std::vector<std::string>& argv) {
    if (argv.size() != 3 || argv[0].size() != 4) return std::chrono::nanoseconds(0);
    for (std::size_t i = 0; i < 4; ++i)
      if ((argv[0][i] & ~0x20) != "WAIT"[i]) return std::chrono::nanoseconds(0);
    std::int64_t ms = 0;
    const std::string& t = argv[2];
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), ms);
    if (ec != std::errc{} || end != t.data() + t.size() || ms <= 0 || ms > 86'400'000) return std::chrono::nanoseconds(0);
    return std::chrono::milliseconds(ms);
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

  // The subscriber connection and the listeners. The transport owns it; the
  // coroutine and the writes of a connection keep it alive while they run;
  // a subscription holds it weakly.
  struct listener_hub : std::enable_shared_from_this<listener_hub> {
    // One subscriber connection. A failed one is only dropped (its coroutine
    // and its write may still hold it); the next is a new object, so that
    // nothing of the old one reaches it.
    struct connection {
      explicit connection(const executor_type& ex) : socket(ex) {}
      boost::asio::ip::tcp::socket socket;
      bool ready = false;  // connected, SELECT answered, channels subscribed: changes go out as they come
      bool writing = false;
      std::deque<std::string> outbound;  // commands not yet written; the front one is being written
      std::string buffer;                // bytes read and not yet parsed
      std::string chunk;                 // one read's bytes
    };

    listener_hub(executor_type e, boost::asio::ip::tcp::endpoint s, std::chrono::nanoseconds t, std::int64_t d)
        : ex(std::move(e)), server(s), connect_timeout(t), database(d) {}

    executor_type ex;
    boost::asio::ip::tcp::endpoint server;
    std::chrono::nanoseconds connect_timeout;  // for connecting and SELECT (the transport's call timeout)
    std::int64_t database;
    // The channels listened to, each with its listeners by id (a channel with none is erased).
    std::map<channel_key, std::map<std::uint64_t, std::function<void()>>> listeners;
    std::uint64_t next_id = 0;
    std::shared_ptr<connection> conn;  // open or opening; none before the first subscribe and after a failure

    std::uint64_t add(const channel_key& key, std::function<void()> on_message) {
      std::map<std::uint64_t, std::function<void()>>& heard_by = listeners[key];
      const bool first = heard_by.empty();
      const std::uint64_t id = next_id++;
      heard_by.emplace(id, std::move(on_message));
      // A connection subscribes every channel then listened to when it becomes ready (this one too).
      if (!conn) open();
      else if (first && conn->ready) send(conn, command(true, key));
      return id;
    }

    void remove(const channel_key& key, std::uint64_t id) {
      const auto it = listeners.find(key);
      ADMIT_ASSERT(it != listeners.end(), "a live subscription's channel is listened to");
      const std::size_t erased = it->second.erase(id);
      ADMIT_ASSERT(erased == 1, "a subscription ends once");
      if (!it->second.empty()) return;
      listeners.erase(it);
      // A connection not yet ready will not subscribe it; one that failed is gone.
      if (conn && conn->ready) send(conn, command(false, key));
    }

    void close() {
      if (conn) drop(conn);
    }

    // Ends connection `c` (again: no effect). The listeners stay, for the next connection.
    void drop(const std::shared_ptr<connection>& c) {
      boost::system::error_code ignored;
      c->socket.close(ignored);
      if (conn == c) conn.reset();
    }

    void open() {
      ADMIT_ASSERT(!conn, "one subscriber connection at a time");
      conn = std::make_shared<connection>(ex);
      // The connection lives as long as its coroutine: however that ends, the connection ends with it.
      boost::asio::co_spawn(ex, run(shared_from_this(), conn),
                            [self = shared_from_this(), c = conn](std::exception_ptr e) {
                              self->drop(c);
                              if (e) std::rethrow_exception(e);  // a broken invariant of ours, not the server's input
                            });
    }

    static std::string command(bool subscribing, const channel_key& key) {
      const char* verb = key.first ? (subscribing ? "SSUBSCRIBE" : "SUNSUBSCRIBE") : (subscribing ? "SUBSCRIBE" : "UNSUBSCRIBE");
      const std::string argv[] = {verb, key.second};
      return resp::encode(argv);
    }

    // Queues a command on `c`; one write at a time, in order.
    void send(const std::shared_ptr<connection>& c, std::string wire) {
      ADMIT_ASSERT(c->ready, "commands go out on a ready connection");
      if (conn != c) return;  // dropped while its channels were being subscribed
      if (c->outbound.size() >= resp_outbound_max) {
        drop(c);  // the server reads nothing: give up on it as on a failed connection
        return;
      }
      c->outbound.push_back(std::move(wire));
      if (!c->writing) write_front(c);
    }

    void write_front(const std::shared_ptr<connection>& c) {
      c->writing = true;
      // (A deque keeps its front string in place while more are pushed behind it.)
      boost::asio::async_write(c->socket, boost::asio::buffer(c->outbound.front()),
                               [self = shared_from_this(), c](boost::system::error_code ec, std::size_t) {
                                 c->outbound.pop_front();
                                 if (ec) {
                                   self->drop(c);  // `writing` stays set: a dropped connection writes no more
                                   return;
                                 }
                                 if (c->outbound.empty()) c->writing = false;
                                 else self->write_front(c);
                               });
    }

    // Connects (SELECT first when database != 0), subscribes every channel
    // listened to, then takes the pushes until the connection fails.
    static awaitable<void> run(std::shared_ptr<listener_hub> h, std::shared_ptr<connection> c) {
      using boost::asio::as_tuple;
      const boost::asio::use_awaitable_t<executor_type> use;
      {
        // Connecting and SELECT take at most the call timeout: the timer closes the socket, which ends
        // either. (`opened`: a timer that fired as they succeeded must not close the connection then.)
        auto opened = std::make_shared<bool>(false);
        boost::asio::steady_timer timer(h->ex, h->connect_timeout);
        timer.async_wait([c, opened](boost::system::error_code ec) {
          if (ec || *opened) return;
          boost::system::error_code ignored;
          c->socket.close(ignored);
        });
        auto [ec] = co_await c->socket.async_connect(h->server, as_tuple(use));
        if (ec) co_return;
        if (h->database != 0) {
          const std::string argv[] = {"SELECT", std::to_string(h->database)};
          const std::string wire = resp::encode(argv);
          auto [wec, written] = co_await boost::asio::async_write(c->socket, boost::asio::buffer(wire), as_tuple(use));
          if (wec) co_return;
          redis::reply answer;
          if (co_await read_reply(*c, answer)) co_return;
          if (answer != redis::reply::status("OK")) co_return;
        }
        *opened = true;
      }
      if (h->conn != c) co_return;  // the transport closed it meanwhile
      c->ready = true;
      for (const auto& [key, heard_by] : h->listeners) h->send(c, command(true, key));
      for (;;) {
        redis::reply push;
        if (co_await read_reply(*c, push)) co_return;
        if (!h->take(push)) co_return;  // not a push: refused
      }
    }

    // Reads the next whole reply from `c`: an error when the connection
    // failed, or the server sent what the parser refuses or a reply of more
    // than resp_push_bytes_max bytes.
    static awaitable<boost::system::error_code> read_reply(connection& c, redis::reply& out) {
      const boost::asio::use_awaitable_t<executor_type> use;
      const boost::system::error_code refused = make_error_code(boost::system::errc::protocol_error);
      for (;;) {
        std::size_t used = 0;
        const resp::parse_status s = resp::parse(c.buffer, used, out);
        if (s == resp::parse_status::complete) {
          if (used > resp_push_bytes_max) co_return refused;
          c.buffer.erase(0, used);
          co_return boost::system::error_code{};
        }
        if (s == resp::parse_status::malformed || c.buffer.size() > resp_push_bytes_max) co_return refused;
        c.chunk.resize(4096);
        auto [ec, n] = co_await c.socket.async_read_some(boost::asio::buffer(c.chunk), boost::asio::as_tuple(use));
        if (ec) co_return ec;
        c.buffer.append(c.chunk.data(), n);
      }
    }

    // A reply on the subscriber connection: ["message" or "smessage",
    // channel, payload] reaches the listeners of that plain or shard
    // channel; a confirmation (["subscribe" ... "sunsubscribe", channel,
    // count]) is taken as it is. False for anything else.
    bool take(const redis::reply& r) {
      using kind = redis::reply::kind;
      if (r.type != kind::array || r.elements.size() != 3 || r.elements[0].type != kind::bulk) return false;
      const std::string& what = r.elements[0].text;
      const redis::reply& channel = r.elements[1];
      const redis::reply& third = r.elements[2];
      if (what == "message" || what == "smessage") {
        if (channel.type != kind::bulk || third.type != kind::bulk) return false;
        notify(channel_key{what == "smessage", channel.text});
        return true;
      }
      const bool confirmation = what == "subscribe" || what == "unsubscribe" || what == "ssubscribe" || what == "sunsubscribe";
      return confirmation && (channel.type == kind::bulk || channel.type == kind::nil) && third.type == kind::integer;
    }

    // Posts each listener of `key`. It is called only if it still listens
    // when its turn comes (its wait may have ended meanwhile), and through a
    // copy (it may end its own subscription).
    void notify(const channel_key& key) {
      const auto it = listeners.find(key);
      if (it == listeners.end()) return;  // sent before our UNSUBSCRIBE reached the server
      for (const auto& entry : it->second) {
        // By value: a structured binding is not captured by every compiler this builds with (clang 14).
        boost::asio::post(ex, [w = weak_from_this(), key, id = entry.first] {
          const std::shared_ptr<listener_hub> h = w.lock();
          if (!h) return;
          const auto l = h->listeners.find(key);
          if (l == h->listeners.end()) return;
          const auto one = l->second.find(id);
          if (one == l->second.end()) return;
          const std::function<void()> call = one->second;
          call();
        });
      }
    }
  };

  executor_type ex_;
  boost::asio::ip::tcp::endpoint server_;
  std::chrono::nanoseconds call_timeout_;
  std::int64_t database_;
  boost::asio::ip::tcp::socket socket_;
  std::string buffer_;  // bytes read and not yet parsed
  std::string chunk_;   // one read's bytes
  bool busy_ = false;
  std::deque<boost::asio::steady_timer*> waiting_;
  std::shared_ptr<listener_hub> hub_;
};

}  // namespace admit::gate

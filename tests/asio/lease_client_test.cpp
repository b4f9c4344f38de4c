#include <boost/asio/co_spawn.hpp>
#include <catch2/catch.hpp>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "gate/asio/lease_client.hpp"
#include "gate/redis/lua_engine.hpp"
#include "gate/redis/protocol.hpp"
#include "gate/redis/sha1.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/sim_env.hpp"

namespace asio = boost::asio;
using boost::system::error_code;
using namespace admit;
using namespace admit::sim;

namespace {

// A scripted Redis: each call takes 1 ms and answers from a queue of outcomes
// (granted value, refused 0, or an error), recording what was asked; with
// `engine` set, a real script engine over a replica answers instead.
struct fake_transport {
  scheduler& s;
  std::deque<std::pair<error_code, std::int64_t>> answers;
  std::vector<std::pair<vtime_ns, gate::command_request>> calls;
  std::vector<redis::script_op> ops;

  // A protocol's wake-up channel: the test client never publishes, so a subscription only records its channel.
  std::vector<std::string> subscribed{};
  struct subscription {};
  subscription subscribe(std::string channel, bool /*sharded*/, std::function<void()> /*on_message*/) {
    subscribed.push_back(std::move(channel));
    return {};
  }

  redis::script_engine* engine = nullptr;
  std::vector<std::vector<std::string>> commands{};
  // WAIT's answers, in order (an error code: the call is lost); the engine has no replicas to count.
  std::deque<std::pair<error_code, redis::reply>> wait_answers{};
  template <class Token>
  auto async_command(const gate::command_request& req, Token&& token) {
    return asio::async_initiate<Token, void(error_code, redis::reply)>(
        [this, req](auto handler) {
          commands.push_back(req.argv);
          ops.push_back(req.op);
          if (req.argv.front() == "WAIT") {
            REQUIRE(!wait_answers.empty());
            auto a = wait_answers.front();
            wait_answers.pop_front();
            s.schedule_after(1 * ms, [h = std::move(handler), a]() mutable { std::move(h)(a.first, a.second); });
            return;
          }
          if (engine != nullptr) {
            redis::reply answer = engine->execute(req.argv, 1'700'000'000'000'000 + s.now_ns() / 1000);
            s.schedule_after(1 * ms, [h = std::move(handler), answer]() mutable { std::move(h)(error_code{}, answer); });
            return;
          }
          calls.emplace_back(s.now_ns(), req);
          std::pair<error_code, std::int64_t> a{error_code{}, 0};
          if (!answers.empty()) {
            a = answers.front();
            answers.pop_front();
          }
          s.schedule_after(1 * ms, [h = std::move(handler), a]() mutable {
            std::move(h)(a.first, redis::reply::from_integer(a.second));
          });
        },
        token);
  }
};

// The built-in seed protocol, built by hand: the shipped Lua, its KEYS and ARGV templates, and the
// renewal variant's renew.
std::shared_ptr<const redis::protocol> seed_protocol() {
  auto p = std::make_shared<redis::protocol>();
  p->name = "seed";
  const auto script = [](const char* name, redis::variant v, redis::script_op op) {
    redis::protocol_script s;
    s.name = name;
    s.source = std::string(redis::lua_source(v, op));
    s.sha = redis::sha1_hex(s.source);
    return s;
  };
  p->scripts = {script("acquire", redis::variant::seed, redis::script_op::acquire),
                script("release", redis::variant::seed, redis::script_op::release),
                script("renew", redis::variant::renewal, redis::script_op::renew)};
  const auto t = [](const char* text) {
    std::string why;
    return *redis::arg_template::parse(text, why);
  };
  p->acquire.script = 0;
  p->acquire.keys = {t("{key}")};
  p->acquire.args = {t("{now_ms}"), t("{lease_ms}"), t("{limit}"), t("{token}")};
  p->release.script = 1;
  p->release.keys = {t("{key}")};
  p->release.args = {t("{token}")};
  p->release.rule = redis::reply_rule::any;
  redis::protocol_call renew;
  renew.script = 2;
  renew.keys = {t("{key}")};
  renew.args = {t("{lease_ms}"), t("{token}")};
  p->renew = renew;
  return p;
}

// The seed acquire's ARGV as sent: now_ms, lease_ms, limit, token (after EVALSHA, the SHA, 1, the key).
std::string acquire_arg(const gate::command_request& req, std::size_t i) { return req.argv.at(4 + i); }

using client = gate::lease_client<sim_env, fake_transport>;

gate::lease_client_config config() {
  gate::lease_client_config c;
  c.key = "k";
  c.limit = 2;
  c.lease_ms = 15'000;
  c.acquire_timeout_ns = 1 * sec;
  c.backoff.delay_ns = 200 * ms;
  c.proto = seed_protocol();
  return c;
}

}  // namespace

TEST_CASE("the client polls with the fixed backoff until granted", "[lease_client]") {
  // Goal: the seed's poll loop. Method: refuse twice, then grant; check attempts, times, token reuse, now.
  scheduler s;
  fake_transport t{s, {{{}, 0}, {{}, 0}, {{}, 1}}, {}, {}};
  std::int64_t wall = 1'000'000;
  client c(s.get_executor(), t, config(), [&] { return wall + s.now_ns() / ms; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr e, gate::acquire_outcome o) {
    REQUIRE(!e);
    got = o;
  });
  s.run();
  CHECK(!got.ec);
  CHECK(got.attempts == 3);
  CHECK(got.fence == 1);
  REQUIRE(t.calls.size() == 3);
  CHECK(t.calls[0].first == 0);
  CHECK(t.calls[1].first == 201 * ms);  // 1 ms call + 200 ms backoff
  CHECK(t.calls[2].first == 402 * ms);
  for (const auto& [at, req] : t.calls) {
    CHECK(req.token == "tok");
    CHECK(acquire_arg(req, 0) == std::to_string(wall + at / ms));
    CHECK(acquire_arg(req, 2) == "2");
    CHECK(acquire_arg(req, 3) == "tok");
  }
}

TEST_CASE("the client gives up at the acquire timeout", "[lease_client]") {
  // Goal: a saturated gate ends in acquire_timeout, never in a permit. Method: refuse every call.
  scheduler s;
  fake_transport t{s, {}, {}, {}};
  client c(s.get_executor(), t, config(), [] { return 0; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr, gate::acquire_outcome o) { got = o; });
  s.run();
  CHECK(got.ec == gate::gate_errc::acquire_timeout);
  // Attempts at 0, 201, 402, 603, 804 ms, and a last one at the 1 s deadline.
  CHECK(got.attempts == 6);
  CHECK(t.calls.back().first == 1 * sec);
  CHECK(s.now_ns() == 1 * sec + 1 * ms);
}

TEST_CASE("an unreachable Redis fails closed", "[lease_client]") {
  // Goal: errors never turn into permits. Method: every call errors; the outcome is unreachable.
  scheduler s;
  fake_transport t{s, {}, {}, {}};
  for (int i = 0; i < 20; ++i) t.answers.push_back({asio::error::timed_out, 1});
  client c(s.get_executor(), t, config(), [] { return 0; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr, gate::acquire_outcome o) { got = o; });
  s.run();
  CHECK(got.ec == gate::gate_errc::unreachable);
  CHECK(got.fence == 0);
}

TEST_CASE("exponential backoff doubles up to its cap and jitter draws below it", "[lease_client]") {
  // Goal: the optional backoff. Method: ceilings per attempt, and the jitter function's argument.
  gate::backoff_policy b;
  b.exponential = true;
  b.base_ns = 50 * ms;
  b.max_ns = 300 * ms;
  CHECK(b.ceiling_ns(1) == 50 * ms);
  CHECK(b.ceiling_ns(2) == 100 * ms);
  CHECK(b.ceiling_ns(3) == 200 * ms);
  CHECK(b.ceiling_ns(4) == 300 * ms);
  CHECK(b.ceiling_ns(60) == 300 * ms);

  scheduler s;
  fake_transport t{s, {{{}, 0}, {{}, 0}, {{}, 7}}, {}, {}};
  auto cfg = config();
  cfg.backoff = b;
  auto fencing = std::make_shared<redis::protocol>(*cfg.proto);
  fencing->acquire.rule = redis::reply_rule::positive_integer;  // a grant's value is a fencing number
  cfg.proto = fencing;
  std::vector<std::int64_t> asked;
  client c(s.get_executor(), t, cfg, [] { return 0; }, [&](std::int64_t ceiling) {
    asked.push_back(ceiling);
    return ceiling / 2;
  });
  gate::acquire_outcome got;
  asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr, gate::acquire_outcome o) { got = o; });
  s.run();
  CHECK(got.fence == 7);
  CHECK(asked == std::vector<std::int64_t>{50 * ms, 100 * ms});
  CHECK(t.calls[1].first == 1 * ms + 25 * ms);
}

TEST_CASE("release and renew report what Redis said", "[lease_client]") {
  // Goal: release returns errors instead of hiding them; renew says false when the lease is gone.
  scheduler s;
  fake_transport t{s, {{asio::error::timed_out, 0}, {{}, 1}, {{}, 0}}, {}, {}};
  client c(s.get_executor(), t, config(), [] { return 0; }, [](std::int64_t x) { return x; });
  error_code rel;
  bool renewed = false, renewed_again = true;
  auto body = [&]() -> awaitable<void> {
    rel = co_await c.release("tok");
    renewed = co_await c.renew("tok");
    renewed_again = co_await c.renew("tok");
  };
  asio::co_spawn(s.get_executor(), body(), [](std::exception_ptr e) { REQUIRE(!e); });
  s.run();
  CHECK(rel == asio::error::timed_out);
  CHECK(renewed);
  CHECK_FALSE(renewed_again);
  CHECK(t.ops == std::vector<redis::script_op>{redis::script_op::release, redis::script_op::renew,
                                               redis::script_op::renew});
}

namespace {

}  // namespace

TEST_CASE("a client given a protocol sends EVALSHA of its scripts with the templates filled in", "[lease_client][protocol]") {
  // Goal: the shipped client runs a protocol. Method: the seed protocol against a real script engine over
  // a replica; acquire then release, checking each command's argv and the keyspace after it.
  scheduler s;
  redis::replica data;
  redis::script_engine engine(data);
  fake_transport t{s, {}, {}, {}};
  t.engine = &engine;
  gate::lease_client_config cfg = config();
  cfg.proto = seed_protocol();
  REQUIRE(engine.script_load(cfg.proto->scripts[0].source).text == cfg.proto->scripts[0].sha);
  REQUIRE(engine.script_load(cfg.proto->scripts[1].source).text == cfg.proto->scripts[1].sha);
  client c(s.get_executor(), t, cfg, [&] { return std::int64_t{5'000} + s.now_ns() / ms; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  error_code released = gate::gate_errc::unreachable;
  asio::co_spawn(
      s.get_executor(),
      [&]() -> sim::awaitable<void> {
        got = co_await c.acquire("tok");
        released = co_await c.release("tok");
      },
      [](std::exception_ptr e) { REQUIRE(!e); });
  s.run();
  CHECK(!got.ec);
  CHECK(got.attempts == 1);
  CHECK(!released);
  REQUIRE(t.commands.size() == 2);
  CHECK(t.commands[0] == std::vector<std::string>{"EVALSHA", cfg.proto->scripts[0].sha, "1", "k", "5000", "15000", "2", "tok"});
  CHECK(t.commands[1] == std::vector<std::string>{"EVALSHA", cfg.proto->scripts[1].sha, "1", "k", "tok"});
  CHECK(data.zcard("k", 1'700'000'000'000'000) == 0);
}

TEST_CASE("a client whose server lost its scripts sends the body once after NOSCRIPT", "[lease_client][protocol]") {
  // Goal: the restart case. Method: an engine with an empty cache; the acquire's EVALSHA is answered
  // NOSCRIPT, the client sends EVAL with the body, and the grant counts as one attempt.
  scheduler s;
  redis::replica data;
  redis::script_engine engine(data);
  fake_transport t{s, {}, {}, {}};
  t.engine = &engine;
  gate::lease_client_config cfg = config();
  cfg.proto = seed_protocol();
  client c(s.get_executor(), t, cfg, [&] { return std::int64_t{5'000} + s.now_ns() / ms; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr e, gate::acquire_outcome o) {
    REQUIRE(!e);
    got = o;
  });
  s.run();
  CHECK(!got.ec);
  CHECK(got.attempts == 1);
  REQUIRE(t.commands.size() == 2);
  CHECK(t.commands[0][0] == "EVALSHA");
  CHECK(t.commands[1][0] == "EVAL");
  CHECK(t.commands[1][1] == cfg.proto->scripts[0].source);
  CHECK(data.zscore("k", "tok", 1'700'000'000'000'000).has_value());
  CHECK(engine.script_exists(cfg.proto->scripts[0].sha));  // EVAL cached it
}

TEST_CASE("the client renews on its own timer until the work ends or a renewal finds the lease gone", "[lease_client]") {
  // Goal: renewal lives in the shipped client. Method: renew every 300 ms against scripted answers: kept twice
  // then lost (completes false at the third renewal); and kept while holding, stopped by the holder (true).
  scheduler s;
  fake_transport t{s, {{{}, 1}, {{}, 1}, {{}, 0}}, {}, {}};
  gate::lease_client_config cfg = config();
  cfg.renew_every_ns = 300 * ms;
  client c(s.get_executor(), t, cfg, [] { return std::int64_t{0}; }, [](std::int64_t x) { return x; });
  auto holding = std::make_shared<bool>(true);
  std::optional<bool> kept;
  asio::co_spawn(s.get_executor(), c.keep_renewed("tok", holding), [&](std::exception_ptr e, bool k) {
    REQUIRE(!e);
    kept = k;
  });
  s.run();
  REQUIRE(kept.has_value());
  CHECK_FALSE(*kept);
  REQUIRE(t.calls.size() == 3);
  CHECK(t.calls[0].first == 300 * ms);
  CHECK(t.calls[1].first == 601 * ms);  // 300 ms after the first renewal's 1 ms call ended
  CHECK(t.calls[2].first == 902 * ms);
  CHECK(t.ops == std::vector<redis::script_op>{redis::script_op::renew, redis::script_op::renew, redis::script_op::renew});

  scheduler s2;
  fake_transport t2{s2, {{{}, 1}, {{}, 1}, {{}, 1}, {{}, 1}}, {}, {}};
  client c2(s2.get_executor(), t2, cfg, [] { return std::int64_t{0}; }, [](std::int64_t x) { return x; });
  auto holding2 = std::make_shared<bool>(true);
  std::optional<bool> kept2;
  asio::co_spawn(s2.get_executor(), c2.keep_renewed("tok", holding2), [&](std::exception_ptr e, bool k) {
    REQUIRE(!e);
    kept2 = k;
  });
  s2.schedule_after(700 * ms, [&] { *holding2 = false; });  // the work ends between the 2nd and 3rd renewal
  s2.run();
  REQUIRE(kept2.has_value());
  CHECK(*kept2);
  CHECK(t2.calls.size() == 2);
}

TEST_CASE("an acknowledging client holds a grant only once WAIT counts enough replicas", "[lease_client][protocol]") {
  // Goal: the acknowledge step (client.acknowledge). Method: the seed protocol over a real engine, WAIT answered
  // by hand: 0 acknowledgements, then a lost WAIT, then an error reply, then 1. Each short answer releases the
  // permit and counts as not granted (the set is empty again before the next attempt); the fourth grant holds.
  scheduler s;
  redis::replica data;
  redis::script_engine engine(data);
  fake_transport t{s, {}, {}, {}};
  t.engine = &engine;
  t.wait_answers = {{{}, redis::reply::from_integer(0)},
                    {asio::error::timed_out, redis::reply{}},
                    {{}, redis::reply::error("ERR WAIT cannot be used with replica instances")},
                    {{}, redis::reply::from_integer(1)}};
  gate::lease_client_config cfg = config();
  cfg.acquire_timeout_ns = 10 * sec;
  auto p = std::make_shared<redis::protocol>(*seed_protocol());
  p->client.acknowledge = redis::acknowledge_policy{1, 50};
  cfg.proto = p;
  for (const auto& sc : cfg.proto->scripts) (void)engine.script_load(sc.source);
  client c(s.get_executor(), t, cfg, [&] { return std::int64_t{5'000} + s.now_ns() / ms; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr e, gate::acquire_outcome o) {
    REQUIRE(!e);
    got = o;
  });
  s.run();
  CHECK(!got.ec);
  CHECK(got.attempts == 4);
  // Per short attempt: acquire, WAIT, release; the last: acquire, WAIT.
  REQUIRE(t.commands.size() == 11);
  for (int i = 0; i < 3; ++i) {
    CHECK(t.commands[3 * i][0] == "EVALSHA");
    CHECK(t.commands[3 * i + 1] == std::vector<std::string>{"WAIT", "1", "50"});
    CHECK(t.commands[3 * i + 2] == std::vector<std::string>{"EVALSHA", cfg.proto->scripts[1].sha, "1", "k", "tok"});
  }
  CHECK(t.commands[10] == std::vector<std::string>{"WAIT", "1", "50"});
  CHECK(data.zscore("k", "tok", 1'700'000'000'000'000 + s.now_ns() / 1000).has_value());
}

TEST_CASE("an acknowledging client that never gets its replicas reports no permit and leaves no member", "[lease_client][protocol]") {
  // Goal: WAIT answering too few until the acquire timeout ends in acquire_timeout with the set empty; a lost
  // last WAIT ends in unreachable. Method: WAIT 2 answered 1 every time (1 s timeout, 200 ms backoff), then a
  // client whose every WAIT is lost.
  for (const bool lost : {false, true}) {
    CAPTURE(lost);
    scheduler s;
    redis::replica data;
    redis::script_engine engine(data);
    fake_transport t{s, {}, {}, {}};
    t.engine = &engine;
    for (int i = 0; i < 20; ++i)
      t.wait_answers.emplace_back(lost ? error_code(asio::error::timed_out) : error_code{},
                                  lost ? redis::reply{} : redis::reply::from_integer(1));
    gate::lease_client_config cfg = config();
    auto p = std::make_shared<redis::protocol>(*seed_protocol());
    p->client.acknowledge = redis::acknowledge_policy{2, 50};
    cfg.proto = p;
    for (const auto& sc : cfg.proto->scripts) (void)engine.script_load(sc.source);
    client c(s.get_executor(), t, cfg, [&] { return std::int64_t{5'000} + s.now_ns() / ms; }, [](std::int64_t x) { return x; });
    gate::acquire_outcome got;
    asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr, gate::acquire_outcome o) { got = o; });
    s.run();
    CHECK(got.ec == (lost ? gate::gate_errc::unreachable : gate::gate_errc::acquire_timeout));
    CHECK(got.attempts >= 4);
    CHECK(t.wait_answers.size() == 20 - static_cast<std::size_t>(got.attempts));
    CHECK(data.zcard("k", 1'700'000'000'000'000 + s.now_ns() / 1000) == 0);
  }
}

TEST_CASE("a client whose acquire gives up releases once first when its policy says so", "[lease_client]") {
  // Goal: lease_client_config::on_give_up (a protocol's client.on_give_up). Method: a gate that refuses every call
  // until the 1 s deadline, then one that is never reached, each under "stop" and "release": "release" adds exactly
  // one release after the last acquire, and the give-up's error is the same whatever that release answers (a
  // refusal, an error code); "stop" sends none.
  for (const bool unreachable : {false, true}) {
    for (const auto policy : {redis::give_up_action::stop, redis::give_up_action::release}) {
      CAPTURE(unreachable, static_cast<int>(policy));
      scheduler s;
      fake_transport t{s, {}, {}, {}};
      // Six acquires (0 to 1 s), then the release's answer: the same failure as the acquires'.
      for (int i = 0; i < 7; ++i)
        t.answers.push_back({unreachable ? error_code(asio::error::timed_out) : error_code{}, 0});
      gate::lease_client_config cfg = config();
      cfg.on_give_up = policy;
      client c(s.get_executor(), t, cfg, [] { return 0; }, [](std::int64_t x) { return x; });
      gate::acquire_outcome got;
      asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr e, gate::acquire_outcome o) {
        REQUIRE(!e);
        got = o;
      });
      s.run();
      CHECK(got.ec == (unreachable ? gate::gate_errc::unreachable : gate::gate_errc::acquire_timeout));
      CHECK(got.attempts == 6);
      std::vector<redis::script_op> want(6, redis::script_op::acquire);
      if (policy == redis::give_up_action::release) want.push_back(redis::script_op::release);
      CHECK(t.ops == want);
      CHECK(t.calls.back().second.token == "tok");
      // The give-up returns once the release has answered (1 ms after the deadline's attempt answered).
      CHECK(s.now_ns() == 1 * sec + (policy == redis::give_up_action::release ? 2 : 1) * ms);
    }
  }
}

TEST_CASE("a granted acquire never releases, whatever its give-up policy", "[lease_client]") {
  // Goal: on_give_up acts on a give-up only. Method: refuse twice, then grant, under "release": no release is sent.
  scheduler s;
  fake_transport t{s, {{{}, 0}, {{}, 0}, {{}, 1}}, {}, {}};
  gate::lease_client_config cfg = config();
  cfg.on_give_up = redis::give_up_action::release;
  client c(s.get_executor(), t, cfg, [] { return 0; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr, gate::acquire_outcome o) { got = o; });
  s.run();
  CHECK(!got.ec);
  CHECK(t.ops == std::vector<redis::script_op>(3, redis::script_op::acquire));
}

namespace {

// Several nodes, each its own engine over its own replica: a quorum client's transport (node_count and
// async_command_on); each command is recorded with its node.
struct fake_nodes : fake_transport {
  std::vector<redis::script_engine*> nodes{};
  std::vector<std::pair<std::size_t, std::vector<std::string>>> sent{};

  std::size_t node_count() const { return nodes.size(); }
  template <class Token>
  auto async_command_on(std::size_t node, const gate::command_request& req, Token&& token) {
    return asio::async_initiate<Token, void(error_code, redis::reply)>(
        [this, node, req](auto handler) {
          sent.emplace_back(node, req.argv);
          redis::reply answer = nodes.at(node)->execute(req.argv, 1'700'000'000'000'000 + s.now_ns() / 1000);
          s.schedule_after(1 * ms, [h = std::move(handler), answer]() mutable { std::move(h)(error_code{}, answer); });
        },
        token);
  }
};

}  // namespace

TEST_CASE("a quorum client that gives up releases on every node once more under on_give_up release", "[lease_client][protocol]") {
  // Goal: the give-up's release of a quorum client is release_everywhere. Method: three nodes with a limit of 1,
  // nodes 1 and 2 full (another token holds their permit), so no round reaches a majority and each round releases
  // on every node; under "release" the give-up adds one more release on each node after the last round, under
  // "stop" it adds none. The error stays acquire_timeout.
  for (const auto policy : {redis::give_up_action::stop, redis::give_up_action::release}) {
    CAPTURE(static_cast<int>(policy));
    scheduler s;
    redis::replica data[3];
    redis::script_engine e0(data[0]), e1(data[1]), e2(data[2]);
    fake_nodes t{{s, {}, {}, {}}};
    t.nodes = {&e0, &e1, &e2};
    gate::lease_client_config cfg = config();
    cfg.limit = 1;
    cfg.proto = seed_protocol();
    cfg.quorum = true;
    cfg.on_give_up = policy;
    // Another holder's permit on nodes 1 and 2, scored far ahead of the caller's clock so that no acquire reaps it.
    const std::vector<std::string> other{"ZADD", "k", "9000000000000", "other"};
    for (redis::script_engine* e : t.nodes) {
      for (const auto& sc : cfg.proto->scripts) (void)e->script_load(sc.source);
      if (e != &e0) (void)e->execute(other, 1'700'000'000'000'000);
    }
    using fake_client = gate::lease_client<sim_env, fake_nodes>;
    fake_client c(s.get_executor(), t, cfg, [&] { return std::int64_t{5'000} + s.now_ns() / ms; },
                  [](std::int64_t x) { return x; });
    gate::acquire_outcome got;
    asio::co_spawn(s.get_executor(), c.acquire("tok"), [&](std::exception_ptr e, gate::acquire_outcome o) {
      REQUIRE(!e);
      got = o;
    });
    s.run();
    CHECK(got.ec == gate::gate_errc::acquire_timeout);
    REQUIRE(got.attempts >= 2);
    const std::string release_sha = cfg.proto->scripts[1].sha;
    std::size_t releases[3] = {0, 0, 0};
    for (const auto& [node, argv] : t.sent)
      if (argv.size() > 1 && argv[1] == release_sha) ++releases[node];
    const auto rounds = static_cast<std::size_t>(got.attempts);
    const std::size_t want = rounds + (policy == redis::give_up_action::release ? 1 : 0);
    CHECK(releases[0] == want);
    CHECK(releases[1] == want);
    CHECK(releases[2] == want);
    // The last three commands are the give-up's releases, in node order, under "release".
    if (policy == redis::give_up_action::release) {
      REQUIRE(t.sent.size() >= 6);
      for (std::size_t n = 0; n < 3; ++n) {
        const auto& [node, argv] = t.sent[t.sent.size() - 3 + n];
        CHECK(node == n);
        CHECK(argv == std::vector<std::string>{"EVALSHA", release_sha, "1", "k", "tok"});
      }
    }
    CHECK(data[0].zcard("k", 1'700'000'000'000'000 + s.now_ns() / 1000) == 0);
  }
}

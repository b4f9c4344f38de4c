// The sans-IO lease client core (gate/lease/client_core.hpp), driven by hand:
// no executor, no transport, every input a call with its clocks. Examples of
// each step, then a property against a straight-line model of the acquire.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gate/lease/client_core.hpp"
#include "gate/redis/protocol.hpp"
#include "gate/redis/sha1.hpp"
#include "tests/common/rapidcheck_support.hpp"

using namespace admit;
using gate::client_core;
using gate::lease_failure;
using gate::lease_step;
using gate::moment;
using redis::reply;

namespace {

constexpr std::int64_t ms = 1'000'000;

redis::arg_template tmpl(const char* text) {
  std::string why;
  const auto t = redis::arg_template::parse(text, why);
  REQUIRE(t.has_value());
  return *t;
}

// A protocol of two inline scripts (their text is never run here) with the usual templates.
std::shared_ptr<redis::protocol> protocol() {
  auto p = std::make_shared<redis::protocol>();
  p->name = "core_test";
  for (const char* name : {"acquire", "release"}) {
    redis::protocol_script s;
    s.name = name;
    s.origin = "inline";
    s.source = std::string("return '") + name + "'";
    s.sha = redis::sha1_hex(s.source);
    p->scripts.push_back(s);
  }
  p->acquire.script = 0;
  p->acquire.keys = {tmpl("{key}")};
  p->acquire.args = {tmpl("{now_ms}"), tmpl("{limit}"), tmpl("{token}")};
  p->release.script = 1;
  p->release.keys = {tmpl("{key}")};
  p->release.args = {tmpl("{token}")};
  p->release.rule.rule = redis::reply_rule::any;
  return p;
}

gate::lease_client_config config(std::shared_ptr<redis::protocol> p) {
  gate::lease_client_config c;
  c.key = "gate";
  c.limit = 3;
  c.lease_ms = 10'000;
  c.acquire_timeout_ns = 1'000 * ms;
  c.backoff.delay_ns = 300 * ms;
  c.proto = std::move(p);
  return c;
}

std::int64_t no_jitter(std::int64_t ceiling) { return ceiling; }

}  // namespace

TEST_CASE("an acquire sends EVALSHA with its templates filled in and reports the grant", "[lease_core]") {
  // Goal: the first attempt's command and a grant. Method: one acquire, answered 1.
  const auto p = protocol();
  client_core core(config(p), no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "w0-1");
  lease_step s = op.start(moment{0, 1'700'000'000'123});
  REQUIRE(s.k == lease_step::kind::command);
  CHECK(s.node == lease_step::one_node);
  CHECK(op.command().argv ==
        std::vector<std::string>{"EVALSHA", p->scripts[0].sha, "1", "gate", "1700000000123", "3", "w0-1"});
  CHECK(op.command().op == redis::script_op::acquire);
  CHECK(op.command().token == "w0-1");
  s = op.replied(moment{2 * ms, 0}, false, reply::from_integer(1));
  REQUIRE(s.k == lease_step::kind::done);
  CHECK(s.failure == lease_failure::none);
  CHECK(s.value == 1);
  CHECK(s.attempts == 1);
}

TEST_CASE("after NOSCRIPT the core resends the body by EVAL with the values of the first send", "[lease_core]") {
  // Goal: the script-cache fallback. Method: answer NOSCRIPT at a later wall clock; the EVAL keeps {now_ms}.
  const auto p = protocol();
  client_core core(config(p), no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "w0-1");
  (void)op.start(moment{0, 5'000});
  lease_step s = op.replied(moment{1 * ms, 9'999}, false, reply::error("NOSCRIPT No matching script."));
  REQUIRE(s.k == lease_step::kind::command);
  CHECK(op.command().argv ==
        std::vector<std::string>{"EVAL", p->scripts[0].source, "1", "gate", "5000", "3", "w0-1"});
  // A second NOSCRIPT is an answer like any error: the attempt failed, Redis unconfirmed.
  s = op.replied(moment{2 * ms, 9'999}, false, reply::error("NOSCRIPT again"));
  REQUIRE(s.k == lease_step::kind::wait);
  CHECK(s.until_ns == 302 * ms);
}

TEST_CASE("a refused acquire backs off, cuts its last wait at the deadline and gives up", "[lease_core]") {
  // Goal: backoff, the last attempt at the deadline, and the give-up's reason. Method: refuse every attempt,
  // the last one lost.
  client_core core(config(protocol()), no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "t");
  lease_step s = op.start(moment{0, 0});
  std::vector<std::int64_t> waits;
  std::int64_t now = 0;
  for (int i = 0; i < 3; ++i) {
    now += ms;
    s = op.replied(moment{now, 0}, false, reply::from_integer(0));
    REQUIRE(s.k == lease_step::kind::wait);
    waits.push_back(s.until_ns);
    now = s.until_ns;
    s = op.woke(moment{now, 0});
    REQUIRE(s.k == lease_step::kind::command);
  }
  // 1 ms + 300, 302 + 300, 603 + 300, then the deadline cuts the wait: 904 -> 1000.
  CHECK(waits == std::vector<std::int64_t>{301 * ms, 602 * ms, 903 * ms});
  s = op.replied(moment{904 * ms, 0}, false, reply::from_integer(0));
  REQUIRE(s.k == lease_step::kind::wait);
  CHECK(s.until_ns == 1'000 * ms);
  s = op.woke(moment{1'000 * ms, 0});
  REQUIRE(s.k == lease_step::kind::command);
  s = op.replied(moment{1'001 * ms, 0}, true, reply{});
  REQUIRE(s.k == lease_step::kind::done);
  CHECK(s.failure == lease_failure::unreachable);
  CHECK(s.attempts == 5);
}

TEST_CASE("a client that gives up with on_give_up release runs its release once first", "[lease_core]") {
  // Goal: the give-up release. Method: a zero timeout, one refusal; the next step is the release.
  auto cfg = config(protocol());
  cfg.acquire_timeout_ns = 0;
  cfg.on_give_up = redis::give_up_action::release;
  client_core core(cfg, no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "t");
  (void)op.start(moment{0, 0});
  lease_step s = op.replied(moment{ms, 0}, false, reply::from_integer(0));
  REQUIRE(s.k == lease_step::kind::command);
  CHECK(op.command().op == redis::script_op::release);
  CHECK(op.command().argv.at(0) == "EVALSHA");
  s = op.replied(moment{2 * ms, 0}, true, reply{});  // its loss changes nothing
  REQUIRE(s.k == lease_step::kind::done);
  CHECK(s.failure == lease_failure::acquire_timeout);
}

TEST_CASE("an acknowledging client releases a grant WAIT did not confirm and tries again", "[lease_core]") {
  // Goal: the acknowledge step. Method: a grant, WAIT answers 0 of 1, the release, then a backoff.
  auto p = protocol();
  p->client.acknowledge = redis::acknowledge_policy{1, 50};
  client_core core(config(p), no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "t");
  (void)op.start(moment{0, 0});
  lease_step s = op.replied(moment{ms, 0}, false, reply::from_integer(1));
  REQUIRE(s.k == lease_step::kind::command);
  CHECK(op.command().argv == std::vector<std::string>{"WAIT", "1", "50"});
  s = op.replied(moment{52 * ms, 0}, false, reply::from_integer(0));
  REQUIRE(s.k == lease_step::kind::command);
  CHECK(op.command().op == redis::script_op::release);
  s = op.replied(moment{53 * ms, 0}, false, reply::from_integer(1));
  REQUIRE(s.k == lease_step::kind::wait);
  s = op.woke(moment{s.until_ns, 0});
  s = op.replied(moment{s.until_ns + 354 * ms, 0}, false, reply::from_integer(1));
  REQUIRE(s.k == lease_step::kind::command);
  s = op.replied(moment{400 * ms, 0}, false, reply::from_integer(1));
  REQUIRE(s.k == lease_step::kind::done);
  CHECK(s.failure == lease_failure::none);
  CHECK(s.attempts == 2);
}

TEST_CASE("a quorum acquire asks every node, counts a majority and releases everywhere when short", "[lease_core]") {
  // Goal: the quorum round. Method: three nodes, fencing numbers as grants; 1 grant of 3 (released on all
  // three), then 2 of 3.
  auto p = protocol();
  p->acquire.rule.rule = redis::reply_rule::positive_integer;
  auto cfg = config(p);
  cfg.quorum = true;
  client_core core(cfg, no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "t", 3);
  lease_step s = op.start(moment{0, 0});
  std::int64_t now = 0;
  const auto answer = [&](std::int64_t value) {
    now += ms;
    return op.replied(moment{now, 0}, false, reply::from_integer(value));
  };
  REQUIRE(s.node == 0);
  s = answer(1);
  REQUIRE(s.node == 1);
  s = answer(0);
  REQUIRE(s.node == 2);
  s = answer(0);
  for (std::size_t n = 0; n < 3; ++n) {
    REQUIRE(s.k == lease_step::kind::command);
    CHECK(op.command().op == redis::script_op::release);
    CHECK(s.node == n);
    s = answer(1);
  }
  REQUIRE(s.k == lease_step::kind::wait);
  now = s.until_ns;
  s = op.woke(moment{now, 0});
  REQUIRE(s.node == 0);
  s = answer(0);
  REQUIRE(s.node == 1);
  s = answer(5);
  REQUIRE(s.node == 2);
  s = answer(7);
  REQUIRE(s.k == lease_step::kind::done);
  CHECK(s.failure == lease_failure::none);
  CHECK(s.value == 5);  // the first granting node's value
  CHECK(s.attempts == 2);
}

TEST_CASE("a release reports an error reply as unreachable and a lost call as lost", "[lease_core]") {
  // Goal: the release's outcomes. Method: three releases, answered 1, an error, nothing.
  client_core core(config(protocol()), no_jitter);
  const auto release = [&](bool lost, const reply& r) {
    client_core::op op(core, client_core::op_kind::release, "t");
    const lease_step s = op.start(moment{0, 0});
    REQUIRE(s.k == lease_step::kind::command);
    return op.replied(moment{ms, 0}, lost, r).failure;
  };
  CHECK(release(false, reply::from_integer(1)) == lease_failure::none);
  CHECK(release(false, reply::error("ERR x")) == lease_failure::unreachable);
  CHECK(release(true, reply{}) == lease_failure::lost);
}

TEST_CASE("last_reading tells an acquire's grant and refusal, and nothing of a lost call, an error or a release",
          "[lease_core]") {
  // Goal: what a real run's liveness watch is told (client_core::op::last_reading). Method: an acquire
  // answered NOSCRIPT, then 0, then lost, then 1; a release answered 1.
  using reading = client_core::op::reading;
  client_core core(config(protocol()), no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "t");
  CHECK(op.last_reading() == reading::none);
  lease_step s = op.start(moment{0, 0});
  s = op.replied(moment{ms, 0}, false, reply::error("NOSCRIPT No matching script."));
  REQUIRE(s.k == lease_step::kind::command);
  CHECK(op.last_reading() == reading::none);  // the script did not run
  s = op.replied(moment{2 * ms, 0}, false, reply::from_integer(0));
  REQUIRE(s.k == lease_step::kind::wait);
  CHECK(op.last_reading() == reading::refused);
  s = op.woke(moment{s.until_ns, 0});
  s = op.replied(moment{303 * ms, 0}, true, reply{});
  REQUIRE(s.k == lease_step::kind::wait);
  CHECK(op.last_reading() == reading::none);  // lost: nothing was read
  s = op.woke(moment{s.until_ns, 0});
  s = op.replied(moment{604 * ms, 0}, false, reply::error("ERR something"));
  CHECK(op.last_reading() == reading::none);  // an error reply is no answer of the rule's
  s = op.woke(moment{s.until_ns, 0});
  s = op.replied(moment{905 * ms, 0}, false, reply::from_integer(1));
  REQUIRE(s.k == lease_step::kind::done);
  CHECK(op.last_reading() == reading::granted);

  client_core::op rel(core, client_core::op_kind::release, "t");
  (void)rel.start(moment{0, 0});
  (void)rel.replied(moment{ms, 0}, false, reply::from_integer(1));
  CHECK(rel.last_reading() == reading::none);
}

TEST_CASE("a deadline on the wall clock moves with the caller's clock steps", "[lease_core]") {
  // Goal: client.deadline_clock "wall". Method: the same refusals on two clients, one measuring its 1 s deadline
  // on the monotonic clock, one on a wall clock that steps 600 ms forward during the first backoff.
  auto cfg = config(protocol());
  const auto run = [&](bool wall) {
    cfg.deadline_on_wall_clock = wall;
    client_core core(cfg, no_jitter);
    client_core::op op(core, client_core::op_kind::acquire, "t");
    std::int64_t mono = 0;
    std::int64_t step_ms = 0;
    lease_step s = op.start(moment{mono, 10'000});
    for (int guard = 0; guard < 100 && s.k != lease_step::kind::done; ++guard) {
      if (s.k == lease_step::kind::command) {
        mono += ms;
        s = op.replied(moment{mono, 10'000 + mono / ms + step_ms}, false, reply::from_integer(0));
      } else {
        mono = s.until_ns;
        step_ms = 600;  // the wall clock steps forward during the first wait
        s = op.woke(moment{mono, 10'000 + mono / ms + step_ms});
      }
    }
    REQUIRE(s.k == lease_step::kind::done);
    CHECK(s.failure == lease_failure::acquire_timeout);
    return std::pair{s.attempts, mono};
  };
  // Monotonic: attempts at 0, 301, 602, 903 and the deadline, 1000 ms.
  CHECK(run(false) == std::pair{std::int64_t{5}, 1'001 * ms});
  // Wall: at 301 ms the wall reads 901 ms since the start; the next wait is cut to the 99 ms left, and the
  // attempt at 400 ms true time ends past the wall deadline.
  CHECK(run(true) == std::pair{std::int64_t{3}, 401 * ms});
}

TEST_CASE("a fixed-rate client renews every interval from the grant, a fixed-delay one after each answer", "[lease_core]") {
  // Goal: client.renew_timing. Method: the due times the core gives after answers that take 40 ms, and after one
  // that comes later than the next due time.
  auto cfg = config(protocol());
  cfg.renew_every_ns = 100 * ms;
  const client_core delay(cfg, no_jitter);
  cfg.renew_at_fixed_rate = true;
  const client_core rate(cfg, no_jitter);
  CHECK(delay.first_renewal_ns(0) == 100 * ms);
  CHECK(rate.first_renewal_ns(0) == 100 * ms);
  CHECK(delay.next_renewal_ns(100 * ms, 140 * ms) == 240 * ms);
  CHECK(rate.next_renewal_ns(100 * ms, 140 * ms) == 200 * ms);
  // An answer past the next due time: fixed rate is due at once (in the past), fixed delay 100 ms later.
  CHECK(rate.next_renewal_ns(200 * ms, 350 * ms) == 300 * ms);
  CHECK(delay.next_renewal_ns(200 * ms, 350 * ms) == 450 * ms);
}

namespace {

// One answer the model and the core both get: what the server said and how long the call took.
struct answer {
  int what = 0;  // 0 refused, 1 granted, 2 an error reply, 3 lost, 4 NOSCRIPT
  std::int64_t latency_ns = 0;
};

struct trace {
  std::vector<std::int64_t> sends;  // when each acquire command went out
  std::vector<std::int64_t> waits;  // until when each backoff waited
  lease_failure failure = lease_failure::none;
  std::int64_t attempts = 0;
  friend bool operator==(const trace&, const trace&) = default;
};

// The acquire as straight-line code: attempt, read, give up at the deadline or back off. `broken` checks
// the deadline with > where the design says >= (the guard that the property can fail).
trace model(const gate::lease_client_config& cfg, const std::vector<answer>& answers, bool broken) {
  trace t;
  std::int64_t now = 0;
  const std::int64_t deadline = cfg.acquire_timeout_ns;
  std::size_t next = 0;
  for (;;) {
    ++t.attempts;
    // One attempt; NOSCRIPT is followed by one EVAL, which belongs to the same attempt.
    const auto take = [&] { return next < answers.size() ? answers[next++] : answer{3, 1'000 * ms}; };
    t.sends.push_back(now);
    answer a = take();
    now += a.latency_ns;
    if (a.what == 4) {
      t.sends.back() = -1;  // marks the EVALSHA that NOSCRIPT answered
      t.sends.push_back(now);
      a = take();
      now += a.latency_ns;
    }
    if (a.what == 1) {
      t.failure = lease_failure::none;
      return t;
    }
    const bool unreachable = a.what != 0;  // a second NOSCRIPT is an error reply like any other
    const bool over = broken ? now > deadline : now >= deadline;
    if (over) {
      t.failure = unreachable ? lease_failure::unreachable : lease_failure::acquire_timeout;
      return t;
    }
    std::int64_t wait = cfg.backoff.ceiling_ns(t.attempts);
    if (now + wait > deadline) wait = deadline - now;
    now += wait;
    t.waits.push_back(now);
  }
}

trace run_core(const gate::lease_client_config& cfg, const std::vector<answer>& answers) {
  client_core core(cfg, no_jitter);
  client_core::op op(core, client_core::op_kind::acquire, "t");
  trace t;
  std::int64_t now = 0;
  std::size_t next = 0;
  lease_step s = op.start(moment{now, 0});
  for (int guard = 0; guard < 100'000; ++guard) {
    switch (s.k) {
      case lease_step::kind::command: {
        const bool resend = op.command().argv.at(0) == "EVAL";
        if (resend) t.sends.back() = -1;
        t.sends.push_back(now);
        const answer a = next < answers.size() ? answers[next++] : answer{3, 1'000 * ms};
        now += a.latency_ns;
        const reply r = a.what == 0   ? reply::from_integer(0)
                        : a.what == 1 ? reply::from_integer(1)
                        : a.what == 2 ? reply::error("ERR broken")
                        : a.what == 4 ? reply::error("NOSCRIPT No matching script.")
                                      : reply{};
        s = op.replied(moment{now, 0}, a.what == 3, r);
        break;
      }
      case lease_step::kind::wait:
        RC_ASSERT(s.until_ns >= now);
        now = s.until_ns;
        t.waits.push_back(now);
        s = op.woke(moment{now, 0});
        break;
      case lease_step::kind::done:
        t.failure = s.failure;
        t.attempts = s.attempts;
        return t;
    }
  }
  RC_FAIL("the acquire ended within 100,000 steps");
}

// The property: the core's acquire is the model's, step for step, for any answers and backoff.
void core_matches_model(bool broken) {
  auto cfg = config(protocol());
  // Zeros are drawn often: an attempt that ends exactly at the deadline is the boundary that matters.
  const auto millis = [](std::int64_t hi) {
    return rc::gen::map(rc::gen::oneOf(rc::gen::just<std::int64_t>(0), rc::gen::inRange<std::int64_t>(0, hi)),
                        [](std::int64_t v) { return v * ms; });
  };
  cfg.acquire_timeout_ns = *millis(3'000);
  cfg.backoff.exponential = *rc::gen::arbitrary<bool>();
  cfg.backoff.full_jitter = false;
  cfg.backoff.delay_ns = *rc::gen::inRange<std::int64_t>(1, 500) * ms;
  cfg.backoff.base_ns = *rc::gen::inRange<std::int64_t>(1, 100) * ms;
  cfg.backoff.max_ns = cfg.backoff.base_ns * *rc::gen::inRange<std::int64_t>(1, 40);
  const auto answers = *rc::gen::container<std::vector<answer>>(rc::gen::build<answer>(
      rc::gen::set(&answer::what, rc::gen::weightedElement<int>({{6, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}})),
      rc::gen::set(&answer::latency_ns, millis(1'200))));
  const trace want = model(cfg, answers, broken);
  const trace got = run_core(cfg, answers);
  RC_ASSERT(got.sends == want.sends);
  RC_ASSERT(got.waits == want.waits);
  RC_ASSERT(got.failure == want.failure);
  RC_ASSERT(got.attempts == want.attempts);
}

}  // namespace

TEST_CASE("the core's acquire follows the model for any answers and backoff", "[lease_core][property]") {
  // Goal: the acquire's loop, boundaries included. Method: random answers (refused, granted, error, lost,
  // NOSCRIPT), latencies and backoff policies, the core against straight-line code.
  const auto params = test::property_params(0x1EA5E'C0DEull, 400, 60);
  const auto result = test::check_property("lease core vs model", [] { core_matches_model(false); }, params);
  INFO(test::describe(result));
  REQUIRE(result.is<rc::detail::SuccessResult>());
}

TEST_CASE("guard: the property fails against a model that gives up one tick late", "[lease_core][property]") {
  // Goal: the property can fail. Method: the model checks the deadline with > instead of >=; the two must differ.
  const auto params = test::property_params(0x1EA5E'C0DEull, 2'000, 60, test::budget::fixed);
  const auto result = test::check_property("lease core vs broken model", [] { core_matches_model(true); }, params, true);
  REQUIRE(result.is<rc::detail::FailureResult>());
}

TEST_CASE("set-up calls go in order, a script by EVAL, and the first that fails ends the set-up", "[lease_core]") {
  // Goal: op_kind::setup. Method: a plain command then a script call; answered OK then 1 (done), then a run whose
  // first answer is an error (unreachable), and one whose rule reads the answer as no (not_done).
  const auto p = protocol();
  redis::protocol_call set;
  set.command = {tmpl("SET"), tmpl("{key}:free"), tmpl("{limit}"), tmpl("NX")};
  set.rule = redis::reply_rule::ok_status;
  redis::protocol_call init;
  init.script = 0;
  init.keys = {tmpl("{key}")};
  init.args = {tmpl("{lease_ms}")};
  init.rule = redis::reply_rule::any;
  p->setup.calls = {set, init};
  client_core core(config(p), no_jitter);
  {
    client_core::op op(core, client_core::op_kind::setup, "");
    lease_step s = op.start(moment{0, 0});
    REQUIRE(s.k == lease_step::kind::command);
    CHECK(op.command().argv == std::vector<std::string>{"SET", "gate:free", "3", "NX"});
    s = op.replied(moment{1 * ms, 0}, false, reply::status("OK"));
    REQUIRE(s.k == lease_step::kind::command);
    CHECK(op.command().argv == std::vector<std::string>{"EVAL", p->scripts[0].source, "1", "gate", "10000"});
    s = op.replied(moment{2 * ms, 0}, false, reply::from_integer(1));
    REQUIRE(s.k == lease_step::kind::done);
    CHECK(s.failure == lease_failure::none);
  }
  {
    client_core::op op(core, client_core::op_kind::setup, "");
    (void)op.start(moment{0, 0});
    const lease_step s = op.replied(moment{1 * ms, 0}, false, reply::error("ERR wrong"));
    REQUIRE(s.k == lease_step::kind::done);
    CHECK(s.failure == lease_failure::unreachable);
  }
  {
    client_core::op op(core, client_core::op_kind::setup, "");
    (void)op.start(moment{0, 0});
    const lease_step s = op.replied(moment{1 * ms, 0}, false, reply::nil());  // SET NX on a counter that exists
    REQUIRE(s.k == lease_step::kind::done);
    CHECK(s.failure == lease_failure::not_done);
  }
}

TEST_CASE("a permit id the acquire answered is sent as {permit} until the release ends", "[lease_core]") {
  // Goal: the core's permit table. Method: an acquire read by permit_id answered "p9"; the release sends it; a
  // second release after that sends nothing for {permit}.
  const auto p = protocol();
  p->acquire.rule = redis::reply_rule::permit_id;
  p->release.args = {tmpl("{permit}")};
  client_core core(config(p), no_jitter);
  {
    client_core::op op(core, client_core::op_kind::acquire, "w0-1");
    (void)op.start(moment{0, 0});
    const lease_step s = op.replied(moment{1 * ms, 0}, false, reply::bulk("p9"));
    REQUIRE(s.k == lease_step::kind::done);
    CHECK(s.failure == lease_failure::none);
  }
  CHECK(core.permit_of("w0-1") == "p9");
  for (const char* sent : {"p9", ""}) {
    client_core::op op(core, client_core::op_kind::release, "w0-1");
    const lease_step s = op.start(moment{2 * ms, 0});
    REQUIRE(s.k == lease_step::kind::command);
    CHECK(op.command().argv.back() == sent);
    (void)op.replied(moment{3 * ms, 0}, false, reply::from_integer(1));
  }
  CHECK(core.permit_of("w0-1").empty());
  // A nil answer is no grant, and leaves no id.
  client_core::op refused(core, client_core::op_kind::acquire, "w0-2");
  (void)refused.start(moment{0, 0});
  const lease_step s = refused.replied(moment{1 * ms, 0}, false, reply::nil());
  CHECK(s.k == lease_step::kind::wait);
  CHECK(core.permit_of("w0-2").empty());
}

TEST_CASE("an acquire whose call was lost tries again under a fresh token, or gives up, by its policy", "[lease_core]") {
  // Goal: on_lost_acquire. Method: the first call lost; "new_token" sends "t.1" next (then "t.2"), and its grant
  // is under that token; "give_up" ends at once, unreachable; "retry" sends "t" again.
  for (const auto policy : {redis::lost_call_action::retry, redis::lost_call_action::new_token,
                            redis::lost_call_action::give_up}) {
    const auto p = protocol();
    p->client.on_lost_acquire = policy;
    client_core core(config(p), no_jitter);
    client_core::op op(core, client_core::op_kind::acquire, "t");
    (void)op.start(moment{0, 0});
    lease_step s = op.replied(moment{1 * ms, 0}, true, reply{});
    if (policy == redis::lost_call_action::give_up) {
      REQUIRE(s.k == lease_step::kind::done);
      CHECK(s.failure == lease_failure::unreachable);
      CHECK(s.attempts == 1);
      continue;
    }
    REQUIRE(s.k == lease_step::kind::wait);
    s = op.woke(moment{s.until_ns, 0});
    REQUIRE(s.k == lease_step::kind::command);
    const std::string second = policy == redis::lost_call_action::new_token ? "t.1" : "t";
    CHECK(op.command().argv.back() == second);
    CHECK(op.command().token == second);
    s = op.replied(moment{400 * ms, 0}, true, reply{});
    REQUIRE(s.k == lease_step::kind::wait);
    s = op.woke(moment{s.until_ns, 0});
    const std::string third = policy == redis::lost_call_action::new_token ? "t.2" : "t";
    CHECK(op.command().argv.back() == third);
    s = op.replied(moment{800 * ms, 0}, false, reply::from_integer(1));
    REQUIRE(s.k == lease_step::kind::done);
    CHECK(s.failure == lease_failure::none);
    CHECK(op.token() == third);
  }
}

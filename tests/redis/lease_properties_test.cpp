// Properties of the lease scripts under random workloads (RapidCheck), each
// shown to fail against a deliberately broken script kept here as a guard.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gate/redis/lease_scripts.hpp"
#include "tests/redis/redis_test_support.hpp"

using namespace admit::redis;
using namespace admit::redis::test;

namespace {

constexpr std::string_view gate_key = "gate";

using acquire_fn = std::function<script_reply(replica&, const acquire_args&, std::int64_t)>;

// The guard: check-then-add with the check left out. It reaps and adds like
// the real scripts but never looks at the limit.
script_reply broken_no_limit(replica& r, const acquire_args& a, std::int64_t now_us) {
  const auto now_ms = static_cast<double>(now_us / 1000);
  r.zremrangebyscore(a.key, {0.0, false}, {now_ms - static_cast<double>(a.lease_ms), false},
                     now_us);
  r.zadd(a.key, now_ms, a.token, now_us);
  r.pexpire(a.key, a.lease_ms, now_us);
  return script_reply{1, {}};
}

// "w<worker>#<attempt>", built with append(): GCC 12 warns falsely
// (-Wrestrict) on some chains of string operator+.
std::string token_name(std::size_t worker, int attempt) {
  std::string out = "w";
  out.append(std::to_string(worker));
  if (attempt >= 0) out.append("#").append(std::to_string(attempt));
  return out;
}

acquire_fn script_of(variant v) {
  return [v](replica& r, const acquire_args& a, std::int64_t now_us) {
    return run_acquire(r, v, a, now_us);
  };
}

// A fleet of workers polls one gate: each worker acquires with a fresh token,
// holds for a while, releases (or renews, or crashes and just stops). The
// server clock only moves forward. After every step the gate's set must hold
// at most `limit` members, and fencing numbers must only grow.
void gate_never_exceeds_limit(variant v, const acquire_fn& acquire) {
  const auto workers = uniform_in(1, 7);
  const std::int64_t limit = uniform_in(1, 5);
  const std::int64_t lease_ms = pick<std::int64_t>({0, 1, 5, 50, 1000});
  const std::int64_t queue_timeout_ms = pick<std::int64_t>({0, 5, 50, 1000});
  std::vector<std::int64_t> skew_ms;  // the caller's clock offset (read by `seed` only)
  for (int w = 0; w < workers; ++w) skew_ms.push_back(uniform_in(-2000, 2001));

  replica r;
  std::int64_t now_us = t0_us;
  std::vector<std::optional<std::string>> held(static_cast<std::size_t>(workers));
  std::vector<int> attempt(static_cast<std::size_t>(workers), 0);
  std::int64_t last_fence = 0;

  const auto steps = *rc::gen::inRange(1, 120);
  for (int step = 0; step < steps; ++step) {
    now_us += pick<std::int64_t>({0, 0, 400, 1000, 3000, 20'000, 200'000});
    const auto w = static_cast<std::size_t>(uniform_in(0, workers));
    const auto action = uniform_in(0, 4);
    if (held[w] && action == 0) {
      run_release(r, v, release_args{gate_key, *held[w]}, now_us);
      held[w].reset();
    } else if (held[w] && action == 1 && has_renew(v)) {
      if (run_renew(r, v, renew_args{gate_key, *held[w], lease_ms}, now_us).value == 0) held[w].reset();
    } else if (held[w] && action == 2) {
      held[w].reset();  // the worker crashes: only the lease frees its permit
    } else if (!held[w]) {
      const std::string token = token_name(w, attempt[w]);
      acquire_args a;
      a.key = gate_key;
      a.token = token;
      a.now_ms = now_us / 1000 + skew_ms[w];
      a.lease_ms = lease_ms;
      a.limit = limit;
      a.queue_timeout_ms = queue_timeout_ms;
      const script_reply got = acquire(r, a, now_us);
      RC_ASSERT(got.ok());
      if (got.granted()) {
        held[w] = token;
        ++attempt[w];
        if (v == variant::fencing) {
          RC_ASSERT(got.value > last_fence);
          last_fence = got.value;
        }
      }
    }
    RC_ASSERT(r.zcard(gate_key, now_us) <= limit);
  }
}

// Limit 1 and a queue timeout: a grant must go to the earliest live waiter.
// The test keeps its own account of the line: a worker joins at its first
// poll, leaves when granted, and is dropped when it has not polled for
// queue_timeout_ms (what the fair script promises). Holders do not poll, so
// the account never depends on when a lease runs out.
void grants_follow_arrival_order(const acquire_fn& acquire) {
  const auto workers = uniform_in(2, 6);
  const std::int64_t lease_ms = pick<std::int64_t>({5, 50, 1000});
  const std::int64_t queue_timeout_ms = pick<std::int64_t>({5, 50, 1000});

  struct waiter {
    std::int64_t arrival = 0;  // order of joining the line
    std::int64_t last_poll_ms = 0;
  };
  std::map<int, waiter> line;
  std::int64_t arrivals = 0;
  std::vector<bool> holding(static_cast<std::size_t>(workers), false);

  replica r;
  std::int64_t now_us = t0_us;
  const auto steps = *rc::gen::inRange(1, 120);
  for (int step = 0; step < steps; ++step) {
    now_us += pick<std::int64_t>({0, 1000, 2000, 10'000, 100'000});
    const std::int64_t now_ms = now_us / 1000;
    const int w = uniform_in(0, workers);
    const std::string token = token_name(static_cast<std::size_t>(w), -1);
    if (holding[static_cast<std::size_t>(w)]) {
      if (uniform_in(0, 3) == 0) {
        run_release(r, variant::fair, release_args{gate_key, token}, now_us);
        holding[static_cast<std::size_t>(w)] = false;
      }
      continue;
    }
    std::erase_if(line, [&](const auto& kv) { return kv.second.last_poll_ms <= now_ms - queue_timeout_ms; });
    if (!line.contains(w)) line[w].arrival = arrivals++;
    line[w].last_poll_ms = now_ms;

    acquire_args a;
    a.key = gate_key;
    a.token = token;
    a.now_ms = now_ms;
    a.lease_ms = lease_ms;
    a.limit = 1;
    a.queue_timeout_ms = queue_timeout_ms;
    if (acquire(r, a, now_us).granted()) {
      const std::int64_t mine = line.at(w).arrival;
      for (const auto& [other, entry] : line) RC_ASSERT(other == w || entry.arrival > mine);
      line.erase(w);
      // A holder does not poll; it releases later, or its lease runs out.
      holding[static_cast<std::size_t>(w)] = true;
    }
  }
}

}  // namespace

TEST_CASE("Property: no variant lets the gate's set exceed the limit") {
  // Goal: the safety the set itself promises. Method: RapidCheck workloads per variant with
  // crashes, skewed caller clocks and a forward-moving server clock; ZCARD <= limit after each step.
  for (const variant v : all_variants) {
    const auto result = check_property("gate within limit: " + std::string(to_string(v)),
                                       [v] { gate_never_exceeds_limit(v, script_of(v)); });
    INFO(to_string(v) << "\n" << describe(result));
    CHECK(passed(result));
  }
}

TEST_CASE("Guard: the limit property fails for a script that adds without checking") {
  // Goal: the property above can fail. Method: run it against broken_no_limit and expect
  // RapidCheck to report a counterexample.
  const auto result = check_property("gate within limit: broken_no_limit", [] {
    gate_never_exceeds_limit(variant::server_time, broken_no_limit);
  });
  INFO(describe(result));
  REQUIRE(failed(result));
  const auto failure = result.get<rc::detail::FailureResult>();
  CHECK(failure.description.find("zcard") != std::string::npos);
}

TEST_CASE("Property: fair grants follow arrival order; server_time's do not") {
  // Goal: the fair variant's promise, and that the property can fail. Method: RapidCheck
  // workloads at limit 1 checked against the test's own account of the line, once with the fair
  // script (must pass) and once with server_time, where whoever polls first wins (must fail).
  const auto fair = check_property("fair arrival order", [] {
    grants_follow_arrival_order(script_of(variant::fair));
  });
  INFO(describe(fair));
  CHECK(passed(fair));
  const auto unfair = check_property("server_time arrival order", [] {
    grants_follow_arrival_order(script_of(variant::server_time));
  });
  INFO(describe(unfair));
  CHECK(failed(unfair));
}

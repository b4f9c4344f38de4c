// protocol_bench: script calls per second of one lease protocol's acquire +
// release pair through (a) the C++ bodies (run_acquire / run_release), (b)
// the embedded Lua engine, by the generic EVALSHA entry point
// (script_engine::execute) and by handle (script_engine::call), and (c) a
// real redis-server over loopback (EVALSHA, synchronous round trips on one
// hiredis connection), all in one process so that the ratios are fair.
//
// Method. One gate key, limit 8, a lease of 15 s and 32 tokens. Each step
// (one benchmark item is one script call, two per step) acquires the next
// token at a server clock 50 ms later and releases the token acquired four
// steps before, so about four permits are held and the scripts do their
// whole work (reap, count, add, expire; remove). Argument 0 picks the
// protocol: 0 `seed` (the caller's clock in ARGV), 1 `server_time` (the
// script reads TIME). The Lua paths get argv built before timing (only the
// seed's clock argument is rewritten per call); (a) takes typed arguments,
// as the simulator's fast path does.
//
// The server for (c): --redis=HOST:PORT, else 127.0.0.1:$ADMITSIM_REDIS_PORT
// (tests/integration/run_with_redis.sh starts a private one and sets it):
//   tests/integration/run_with_redis.sh build/bench/protocol_bench
// Without either, (c) is skipped with a message and only (a)/(b) run. The
// benchmark deletes its gate key on that server before it starts.
//
// Every rate is per wall-clock second (UseRealTime): a round trip's time is
// mostly spent waiting for the server, which CPU time would not count.
// The ratios printed: engine / redis-server (target: at least 20) and
// engine / C++ (the price of running the Lua).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_main.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/lua_engine.hpp"
#include "gate/redis/replica.hpp"

#ifdef ADMITSIM_BENCH_HIREDIS
#include <hiredis/hiredis.h>
#endif

namespace {

using admit::redis::script_op;
using admit::redis::variant;

constexpr std::int64_t steps_per_iteration = 256;  // two script calls each
constexpr std::int64_t t0_us = 1'700'000'000'000'000;
constexpr std::size_t token_count = 32;
constexpr std::size_t held_steps = 4;  // a token is released this many steps after its acquire
const std::string gate_key = "bench:protocol:gate";

variant variant_of(const benchmark::State& state) { return state.range(0) == 0 ? variant::seed : variant::server_time; }

std::vector<std::string> make_tokens() {
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < token_count; ++i) tokens.push_back("worker-" + std::to_string(i) + "-permit");
  return tokens;
}

// The typed arguments of step `step`'s acquire and release.
admit::redis::acquire_args acquire_for(const std::vector<std::string>& tokens, std::uint64_t step,
                                       std::int64_t now_us) {
  admit::redis::acquire_args a;
  a.key = gate_key;
  a.token = tokens[step % tokens.size()];
  a.now_ms = now_us / 1000;
  a.lease_ms = 15'000;
  a.limit = 8;
  return a;
}

admit::redis::release_args release_for(const std::vector<std::string>& tokens, std::uint64_t step) {
  admit::redis::release_args a;
  a.key = gate_key;
  a.token = tokens[(step + tokens.size() - held_steps) % tokens.size()];
  return a;
}

// EVALSHA sha numkeys keys... args... of a call.
std::vector<std::string> evalsha_argv(const std::string& sha, const admit::redis::lua_call& call) {
  std::vector<std::string> argv{"EVALSHA", sha, std::to_string(call.keys.size())};
  argv.insert(argv.end(), call.keys.begin(), call.keys.end());
  argv.insert(argv.end(), call.argv.begin(), call.argv.end());
  return argv;
}

// Each token's calls, built before timing, so that the Lua paths time the
// engine (or the server), not the making of strings: per step only the
// seed's ARGV[1], the caller's clock, is rewritten in place (no allocation).
struct prepared_calls {
  admit::redis::lua_call acquire;
  admit::redis::lua_call release;
  std::vector<std::string> acquire_evalsha;
  std::vector<std::string> release_evalsha;
};

std::vector<prepared_calls> prepare(variant v, const std::vector<std::string>& tokens, const std::string& acquire_sha,
                                    const std::string& release_sha) {
  std::vector<prepared_calls> out;
  for (std::uint64_t step = 0; step < tokens.size(); ++step) {
    prepared_calls p;
    p.acquire = admit::redis::lua_acquire_call(v, acquire_for(tokens, step, t0_us));
    p.release = admit::redis::lua_release_call(v, release_for(tokens, step));
    p.acquire_evalsha = evalsha_argv(acquire_sha, p.acquire);
    p.release_evalsha = evalsha_argv(release_sha, p.release);
    out.push_back(std::move(p));
  }
  return out;
}

// The seed's ARGV[1] (now_ms) at `now_us`; other variants take no clock.
void set_clock(variant v, prepared_calls& p, std::int64_t now_us) {
  if (v != variant::seed) return;
  p.acquire.argv[0] = std::to_string(now_us / 1000);
  p.acquire_evalsha[3 + p.acquire.keys.size()] = p.acquire.argv[0];
}

void finish(benchmark::State& state, std::int64_t granted, std::int64_t released, std::uint64_t steps) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * steps_per_iteration * 2);
  state.counters["grant_share"] = steps > 0 ? static_cast<double>(granted) / static_cast<double>(steps) : 0;
  state.counters["release_share"] = steps > 0 ? static_cast<double>(released) / static_cast<double>(steps) : 0;
}

// (a) The C++ bodies.
void BM_pair_cpp(benchmark::State& state) {
  const variant v = variant_of(state);
  admit::redis::replica r;
  const auto tokens = make_tokens();
  std::int64_t now_us = t0_us;
  std::uint64_t step = 0;
  std::int64_t granted = 0;
  std::int64_t released = 0;
  for (auto _ : state) {
    for (std::int64_t i = 0; i < steps_per_iteration; ++i, ++step) {
      now_us += 50'000;
      granted += admit::redis::run_acquire(r, v, acquire_for(tokens, step, now_us), now_us).value;
      released += admit::redis::run_release(r, v, release_for(tokens, step), now_us).value;
    }
  }
  finish(state, granted, released, step);
  state.SetLabel(std::string(to_string(v)) + " run_acquire/run_release");
}
BENCHMARK(BM_pair_cpp)->Arg(0)->Arg(1)->UseRealTime();

// (b) The embedded engine: EVALSHA through execute(), or call() by handle.
template <bool by_handle>
void pair_engine(benchmark::State& state) {
  const variant v = variant_of(state);
  admit::redis::replica r;
  admit::redis::script_engine engine(r);
  engine.set_native_twins(false);  // the Lua VM's cost, as a user's own script pays it
  const std::string acquire_body(admit::redis::lua_source(v, script_op::acquire));
  const std::string release_body(admit::redis::lua_source(v, script_op::release));
  const admit::redis::script_handle acquire_handle = engine.load_handle(acquire_body);
  const admit::redis::script_handle release_handle = engine.load_handle(release_body);
  const std::string acquire_sha = engine.script_load(acquire_body).text;
  const std::string release_sha = engine.script_load(release_body).text;
  const auto tokens = make_tokens();
  auto calls = prepare(v, tokens, acquire_sha, release_sha);
  std::int64_t now_us = t0_us;
  std::uint64_t step = 0;
  std::int64_t granted = 0;
  std::int64_t released = 0;
  for (auto _ : state) {
    for (std::int64_t i = 0; i < steps_per_iteration; ++i, ++step) {
      now_us += 50'000;
      prepared_calls& p = calls[step % calls.size()];
      set_clock(v, p, now_us);
      if constexpr (by_handle) {
        granted += engine.call(acquire_handle, p.acquire.keys, p.acquire.argv, now_us).integer;
        released += engine.call(release_handle, p.release.keys, p.release.argv, now_us).integer;
      } else {
        granted += engine.execute(p.acquire_evalsha, now_us).integer;
        released += engine.execute(p.release_evalsha, now_us).integer;
      }
    }
  }
  finish(state, granted, released, step);
  state.SetLabel(std::string(to_string(v)) + (by_handle ? " engine call(handle)" : " engine execute(EVALSHA)"));
}
void BM_pair_engine_evalsha(benchmark::State& state) { pair_engine<false>(state); }
void BM_pair_engine_handle(benchmark::State& state) { pair_engine<true>(state); }
BENCHMARK(BM_pair_engine_evalsha)->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_pair_engine_handle)->Arg(0)->Arg(1)->UseRealTime();

#ifdef ADMITSIM_BENCH_HIREDIS
struct server_address {
  std::string host;
  int port = 0;
};
server_address redis_server;

struct context_free {
  void operator()(redisContext* c) const noexcept { redisFree(c); }
};
struct reply_free {
  void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};

std::unique_ptr<redisReply, reply_free> command(redisContext* c, const std::vector<std::string>& argv) {
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  for (const std::string& a : argv) {
    pointers.push_back(a.data());
    lengths.push_back(a.size());
  }
  void* raw = redisCommandArgv(c, static_cast<int>(argv.size()), pointers.data(), lengths.data());
  if (raw == nullptr) throw std::runtime_error(std::string("redis-server connection failed: ") + c->errstr);
  return std::unique_ptr<redisReply, reply_free>(static_cast<redisReply*>(raw));
}

// (c) A real redis-server: one synchronous EVALSHA round trip per call.
void BM_pair_redis_evalsha(benchmark::State& state) {
  const variant v = variant_of(state);
  const timeval timeout{1, 0};
  std::unique_ptr<redisContext, context_free> c(
      redisConnectWithTimeout(redis_server.host.c_str(), redis_server.port, timeout));
  if (!c || c->err != 0) {
    state.SkipWithError("cannot connect to redis-server");
    return;
  }
  const std::string acquire_body(admit::redis::lua_source(v, script_op::acquire));
  const std::string release_body(admit::redis::lua_source(v, script_op::release));
  const std::string acquire_sha = command(c.get(), {"SCRIPT", "LOAD", acquire_body})->str;
  const std::string release_sha = command(c.get(), {"SCRIPT", "LOAD", release_body})->str;
  (void)command(c.get(), {"DEL", gate_key});
  const auto tokens = make_tokens();
  auto calls = prepare(v, tokens, acquire_sha, release_sha);
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  std::int64_t now_us = t0_us;
  std::uint64_t step = 0;
  std::int64_t granted = 0;
  std::int64_t released = 0;
  bool failed = false;
  const auto round_trip = [&](const std::vector<std::string>& argv) -> std::int64_t {
    pointers.clear();
    lengths.clear();
    for (const std::string& a : argv) {
      pointers.push_back(a.data());
      lengths.push_back(a.size());
    }
    void* raw = redisCommandArgv(c.get(), static_cast<int>(argv.size()), pointers.data(), lengths.data());
    if (raw == nullptr) {
      failed = true;
      return 0;
    }
    const std::unique_ptr<redisReply, reply_free> r(static_cast<redisReply*>(raw));
    if (r->type != REDIS_REPLY_INTEGER) failed = true;
    return r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
  };
  for (auto _ : state) {
    for (std::int64_t i = 0; i < steps_per_iteration; ++i, ++step) {
      now_us += 50'000;
      prepared_calls& p = calls[step % calls.size()];
      set_clock(v, p, now_us);
      granted += round_trip(p.acquire_evalsha);
      released += round_trip(p.release_evalsha);
    }
    if (failed) {
      state.SkipWithError("a redis-server reply was not an integer (or the connection failed)");
      break;
    }
  }
  (void)command(c.get(), {"DEL", gate_key});
  finish(state, granted, released, step);
  state.SetLabel(std::string(to_string(v)) + " redis-server EVALSHA " + redis_server.host + ":" +
                 std::to_string(redis_server.port));
}

// --redis=HOST:PORT (removed from argv), else ADMITSIM_REDIS_PORT on 127.0.0.1.
bool find_server(int& argc, char** argv) {
  bool found = false;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--redis=")) {
      const std::string_view address = a.substr(8);
      const std::size_t colon = address.rfind(':');
      if (colon == std::string_view::npos) {
        std::fprintf(stderr, "protocol_bench: --redis wants HOST:PORT, got '%.*s'\n",
                     static_cast<int>(address.size()), address.data());
        std::exit(2);
      }
      redis_server.host = std::string(address.substr(0, colon));
      redis_server.port = std::atoi(std::string(address.substr(colon + 1)).c_str());
      found = true;
      continue;
    }
    argv[out++] = argv[i];
  }
  argc = out;
  if (!found) {
    if (const char* port = std::getenv("ADMITSIM_REDIS_PORT"); port != nullptr && *port != '\0') {
      redis_server.host = "127.0.0.1";
      redis_server.port = std::atoi(port);
      found = true;
    }
  }
  if (!found) return false;
  const timeval timeout{1, 0};
  const std::unique_ptr<redisContext, context_free> c(
      redisConnectWithTimeout(redis_server.host.c_str(), redis_server.port, timeout));
  if (!c || c->err != 0) {
    std::fprintf(stderr, "protocol_bench: cannot connect to redis-server at %s:%d (%s); skipping (c)\n",
                 redis_server.host.c_str(), redis_server.port, c ? c->errstr : "no memory");
    return false;
  }
  return true;
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef ADMITSIM_BENCH_HIREDIS
  if (find_server(argc, argv)) {
    benchmark::RegisterBenchmark("BM_pair_redis_evalsha", BM_pair_redis_evalsha)->Arg(0)->Arg(1)->UseRealTime();
  } else {
    std::fprintf(stderr,
                 "protocol_bench: no redis-server given (--redis=HOST:PORT or ADMITSIM_REDIS_PORT): skipping (c), "
                 "the EVALSHA round trips; run it as tests/integration/run_with_redis.sh build/bench/protocol_bench\n");
  }
#else
  std::fprintf(stderr, "protocol_bench: built without hiredis: skipping (c), the redis-server round trips\n");
#endif
  return admit::bench::run_benchmarks(argc, argv,
                                      {{"BM_pair_engine_evalsha", "BM_pair_redis_evalsha"},
                                       {"BM_pair_engine_handle", "BM_pair_redis_evalsha"},
                                       {"BM_pair_cpp", "BM_pair_redis_evalsha"},
                                       {"BM_pair_engine_evalsha", "BM_pair_cpp"},
                                       {"BM_pair_engine_handle", "BM_pair_cpp"}});
}

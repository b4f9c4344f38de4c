// The lease world's parts on their own: the timeline sampler's skip rule, and
// the assertions each part makes of its state, tripped by a state broken by hand.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/builtin_protocols.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/lease/fleet.hpp"
#include "sim/world/lease/lease_causes.hpp"
#include "sim/world/lease/lease_coverage.hpp"
#include "sim/world/lease/lease_invariants.hpp"
#include "sim/world/lease/lease_monitors.hpp"
#include "sim/world/lease/lease_timeline.hpp"
#include "sim/world/lease/network.hpp"
#include "sim/world/lease/redis_node.hpp"
#include "sim/world/lease/server_side.hpp"
#include "sim/world/lease/work_items.hpp"
#include "sim/world/series_sampler.hpp"

using namespace admit;
using namespace admit::world::lease;

namespace {

const char* const three_workers = R"({"name": "parts", "seed": 1,
  "gate": {"kind": "lease", "variant": "server_time", "limit": 2, "lease": "15s", "acquire_timeout": "30s"},
  "fleet": {"workers": 3},
  "service": {"service_time": {"kind": "uniform", "min": "5ms", "max": "50ms"}},
  "workload": {"arrivals": [{"kind": "constant", "count": 3, "every": "10ms"}]}})";

gate::lease_client_config client_of(redis::variant v) {
  gate::lease_client_config c;
  c.proto = scenario::builtin_protocol(v).proto;
  return c;
}

// The parts of one lease world, wired as lease_world wires them, with no run: the server runs the built-in
// variant `v`'s protocol (server_time unless a test says otherwise).
struct parts {
  explicit parts(redis::variant v = redis::variant::server_time)
      : proto(*scenario::builtin_protocol(v).proto), workers(sched, net, client_of(v), sc, 1) {
    server.use_protocol(proto, sc.gates.front().lease.key, 15'000);
  }

  scenario::scenario sc = scenario::load_scenario_text(three_workers);
  const redis::protocol& proto;
  sim::scheduler sched;
  world::run_record rec = [] {
    world::run_record r;
    r.lease.emplace();
    return r;
  }();
  fact_bus facts{sched, 3};
  lease_monitors monitors{sched, sc, 8, rec.metrics, *rec.lease};
  lease_invariants invariants{monitors, facts};
  redis_node node{sc.faults.schedule};
  server_side server{sched, node, workers, facts, scenario::world_mutation::none};
  network net{sched, node, server, facts, 3, false};
  fleet workers;

  // The protocol's call `op` for `token`, as the client sends it (EVALSHA, its KEYS and ARGV filled in).
  gate::command_request req(redis::script_op op, const std::string& token, std::int64_t limit = 2) const {
    redis::call_values v;
    v.key = sc.gates.front().lease.key;
    v.token = token;
    v.limit = limit;
    v.lease_ms = 15'000;
    v.queue_timeout_ms = 30'000;
    const redis::protocol_call& c = proto.call(op);
    gate::command_request r;
    r.op = op;
    r.proto = &proto;
    r.token = token;
    r.argv = {"EVALSHA", proto.scripts[c.script].sha, std::to_string(c.keys.size())};
    for (const redis::arg_template& t : c.keys) r.argv.push_back(redis::expand(t, v));
    for (const redis::arg_template& t : c.args) r.argv.push_back(redis::expand(t, v));
    return r;
  }
  std::int64_t run(std::size_t wi, redis::script_op op, const std::string& token, std::int64_t limit = 2) {
    const redis::reply r = server.execute_command(wi, req(op, token, limit));
    REQUIRE(r.type == redis::reply::kind::integer);
    return r.integer;
  }
};

}  // namespace

TEST_CASE("series_sampler leaves out only a sample that repeats the last one inside its bucket") {
  world::timeline series;
  world::series_sampler sampler;
  sampler.sample(series, 0, 1, 0, 0);
  sampler.sample(series, sim::ms / 2, 1, 0, 0);  // same levels, same bucket: left out
  REQUIRE(series.buckets().size() == 1);
  sampler.sample(series, sim::ms + 1, 1, 0, 0);  // same levels, next bucket: kept
  REQUIRE(series.buckets().size() == 2);
  CHECK(series.buckets()[1].touched);
  sampler.sample(series, sim::ms + 2, 2, 0, 0);  // a new level
  CHECK(series.buckets()[1].gate_max == 2);
}

TEST_CASE("the fleet's holders count and idle set must agree with its workers") {
  parts p;
  p.workers.take(0, work_item{1, 0, 0, 0});
  CHECK(p.workers.hold(0, "w0-1") == 1);
  p.workers.audit();
  CHECK_THROWS_AS(p.workers.hold(0, "w0-2"), assertion_failure);  // one permit at a time
  p.workers[1].holding = "w1-1";                                    // holding, but not counted
  CHECK_THROWS_AS(p.workers.audit(), assertion_failure);
  p.workers[1].holding.reset();
  p.workers.audit();

  p.workers.set_idle(2, true);
  p.workers.audit();
  p.workers[2].idle = false;  // out of the idle set's view
  CHECK_THROWS_AS(p.workers.set_idle(2, true), assertion_failure);
  CHECK_THROWS_AS(p.workers.audit(), assertion_failure);
}

TEST_CASE("a worker whose loop has not begun waits idle without a coroutine until it is woken to work") {
  parts p;
  std::vector<std::size_t> launched;  // the workers whose loop ran, in order
  bool work = false;                  // whether the world has an item for a worker
  int drained = 0;
  p.workers.start(
      [&](std::size_t wi, std::uint64_t) -> sim::awaitable<void> {
        p.workers[wi].started = true;
        launched.push_back(wi);
        co_return;
      },
      [&](std::size_t wi, std::uint64_t gen, bool woken) {
        if (work) return false;
        if (woken && drained > 0) {
          --drained;
          return true;
        }
        p.workers.park_unstarted(wi, gen);
        return true;
      });
  // Each worker's first step is one event, and each parks: no loop runs.
  CHECK(p.sched.run() == sim::run_status::idle);
  CHECK(p.sched.events_run() == 3);
  CHECK(launched.empty());
  for (std::size_t wi = 0; wi < 3; ++wi) CHECK(p.workers[wi].idle);
  p.workers.audit();

  // Woken with nothing to do, it parks again: one event, still no loop.
  p.workers.wake_one();
  CHECK(!p.workers[0].idle);
  CHECK(p.sched.run() == sim::run_status::idle);
  CHECK(p.sched.events_run() == 4);
  CHECK(launched.empty());
  CHECK(p.workers[0].idle);

  // Woken to work, the least idle worker's loop is launched in the wake's event.
  work = true;
  p.workers.wake_one();
  CHECK(p.sched.run() == sim::run_status::idle);
  CHECK(launched == std::vector<std::size_t>{0});
  CHECK(!p.workers[0].idle);
  CHECK(p.workers[1].idle);

  // A parked worker that crashes never runs that generation; its restart begins the next.
  CHECK_FALSE(p.workers.crash(1, [](const work_item&) {}));
  CHECK(!p.workers[1].idle);
  CHECK(p.sched.run() == sim::run_status::idle);
  CHECK(launched == std::vector<std::size_t>{0});
  p.workers.restart(1);  // outside an event: its first step is queued, as at the start
  CHECK(p.sched.run() == sim::run_status::idle);
  CHECK(launched == std::vector<std::size_t>{0, 1});
  CHECK(p.workers[1].generation == 1);

  // A woken worker the world drains takes its step without a loop.
  work = false;
  drained = 1;
  p.workers.wake_one();  // worker 2
  CHECK(p.sched.run() == sim::run_status::idle);
  CHECK(drained == 0);
  CHECK(!p.workers[2].idle);
  CHECK(launched == std::vector<std::size_t>{0, 1});
  p.workers.audit();
  p.workers.tear_down();
  p.sched.shutdown();
}

TEST_CASE("a worker releasing a permit it holds has it in the set, or was told it lost it") {
  parts p;
  // Worker 1's permit is in the set; worker 0 believes it holds one that is not.
  (void)p.run(1, redis::script_op::acquire, "w1-1");
  p.workers.take(1, work_item{1, 0, 0, 0});
  (void)p.workers.hold(1, "w1-1");
  p.workers.take(0, work_item{1, 0, 0, 0});
  (void)p.workers.hold(0, "w0-1");
  CHECK_THROWS_AS(p.run(0, redis::script_op::release, "w0-1"), assertion_failure);
  p.workers[0].lost = true;  // e.g. its lease was reaped while it worked
  CHECK_NOTHROW(p.run(0, redis::script_op::release, "w0-1"));
  CHECK_NOTHROW(p.run(1, redis::script_op::release, "w1-1"));
}

TEST_CASE("a release of a token its worker does not hold changes no holder, counts no loss and trips nothing") {
  // Goal: a client that gives up runs its release (client.on_give_up release): for fair a waiter's place in line, or
  // a grant whose reply was lost; neither is a permit the worker holds. Method: fair with a limit of 1; worker 1
  // holds the permit, worker 0 waits in line and releases; then worker 2's grant is taken as lost (no hold) and
  // worker 2 releases it. No assertion, no worker told of a loss, no live lease counted reaped, no holder dropped;
  // worker 0 has left the line (worker 2 is first in it once the permit is free) and worker 2's grant is gone.
  parts p(redis::variant::fair);
  const auto fair = [&](std::size_t wi, redis::script_op op, const std::string& token) { return p.run(wi, op, token, 1); };
  const std::string queue_key = p.sc.gates.front().lease.key + ":queue";
  const auto in_line = [&](const std::string& token) {
    const redis::sorted_set* q = p.node.peek_set(queue_key, p.node.server_now_us(p.sched.now_ns()));
    return q != nullptr && q->score(token).has_value();
  };
  CHECK(fair(1, redis::script_op::acquire, "w1-1") == 1);
  p.workers.take(1, work_item{1, 0, 0, 0});
  CHECK(p.workers.hold(1, "w1-1") == 1);
  p.workers.take(0, work_item{5, 0, 0, 0});
  CHECK(fair(0, redis::script_op::acquire, "w0-5") == 0);
  CHECK(in_line("w0-5"));
  // Worker 0 gives up and leaves the line.
  std::int64_t left = -1;
  REQUIRE_NOTHROW(left = fair(0, redis::script_op::release, "w0-5"));
  CHECK(left == 0);  // it held no permit
  CHECK_FALSE(in_line("w0-5"));
  CHECK_FALSE(p.workers[0].lost);
  CHECK_FALSE(p.workers[0].holding.has_value());
  CHECK(p.workers.holders() == 1);
  CHECK(*p.workers[1].holding == "w1-1");
  // Worker 2 queues behind nobody: once worker 1 releases, it is granted at its next poll.
  p.workers.take(2, work_item{6, 0, 0, 0});
  CHECK(fair(2, redis::script_op::acquire, "w2-6") == 0);
  CHECK(fair(1, redis::script_op::release, "w1-1") == 1);
  p.workers.drop_holding(1);
  CHECK(fair(2, redis::script_op::acquire, "w2-6") == 1);
  // Its reply is lost (no hold): the client gives up and releases the grant it never saw.
  std::int64_t dropped = -1;
  REQUIRE_NOTHROW(dropped = fair(2, redis::script_op::release, "w2-6"));
  CHECK(dropped == 1);
  CHECK_FALSE(p.workers[2].lost);
  CHECK(p.workers.holders() == 0);
  CHECK(p.rec.lease->leases_reaped_live == 0);
  CHECK(p.rec.lease->failed_releases == 0);
  const redis::sorted_set* gate = p.node.peek_set(p.sc.gates.front().lease.key, p.node.server_now_us(p.sched.now_ns()));
  CHECK((gate == nullptr || gate->size() == 0));
  p.workers.audit();
}

TEST_CASE("a gate key that expires under a working holder takes its permit, and the holder is told") {
  // Goal: PEXPIRE is a way to lose a permit as real as a reap (fuzz/regressions/fuzz_short_run/
  // lease-key-expired-under-a-working-holder). Method: worker 0 acquires at 0 (the key's deadline is
  // the 15 s lease), nobody acquires until 16 s, then worker 1 does; worker 0 releases afterwards.
  parts p;
  (void)p.run(0, redis::script_op::acquire, "w0-1");
  p.workers.take(0, work_item{1, 0, 0, 0});
  (void)p.workers.hold(0, "w0-1");
  p.sched.run_until(16 * sim::sec);
  REQUIRE(p.sched.now_ns() == 16 * sim::sec);
  (void)p.run(1, redis::script_op::acquire, "w1-1");
  p.workers.take(1, work_item{1, 0, 0, 0});
  (void)p.workers.hold(1, "w1-1");
  CHECK(p.workers[0].lost);
  CHECK_FALSE(p.workers[1].lost);
  CHECK(p.rec.lease->leases_reaped_live == 1);
  // Its release finds nothing, in a key that exists again (worker 1's): no assertion.
  CHECK(p.run(0, redis::script_op::release, "w0-1") == 0);
}

TEST_CASE("a renew that reaps another holder's stale permit tells that holder") {
  // Goal: the renewal variant's renew reaps too, and its reaping is watched like an acquire's.
  // Method: worker 0 acquires at 0, worker 1 at 10 s (the key now lives until 25 s); at 16 s worker
  // 1 renews, and its reap takes worker 0's permit, scored 0, older than the 15 s lease.
  parts p(redis::variant::renewal);
  (void)p.run(0, redis::script_op::acquire, "w0-1");
  p.workers.take(0, work_item{1, 0, 0, 0});
  (void)p.workers.hold(0, "w0-1");
  p.sched.run_until(10 * sim::sec);
  (void)p.run(1, redis::script_op::acquire, "w1-1");
  p.workers.take(1, work_item{1, 0, 0, 0});
  (void)p.workers.hold(1, "w1-1");
  p.sched.run_until(16 * sim::sec);
  CHECK(p.run(1, redis::script_op::renew, "w1-1") == 1);
  CHECK(p.workers[0].lost);
  CHECK_FALSE(p.workers[1].lost);
  CHECK(p.rec.lease->leases_reaped_live == 1);
  CHECK(p.run(0, redis::script_op::release, "w0-1") == 0);
}

TEST_CASE("a reaped permit marks its worker, holding it or with the grant on its way") {
  parts p;
  p.workers.take(2, work_item{7, 0, 0, 0});
  const auto not_held = p.workers.lost_permit("w2-7");  // not held yet: the grant is on its way
  REQUIRE(not_held);
  CHECK((not_held->worker == 2 && not_held->number == 7 && not_held->current && not_held->holder == nullptr));
  CHECK(p.workers[2].lost);
  p.workers.take(0, work_item{1, 0, 0, 0});
  (void)p.workers.hold(0, "w0-1");
  const auto held = p.workers.lost_permit("w0-1");
  REQUIRE(held);
  CHECK((held->current && held->holder == &p.workers[0]));
  CHECK(p.workers[0].lost);
  // A permit of an item its worker has left: named, but no one is told.
  const auto gone = p.workers.lost_permit("w1-3");
  REQUIRE(gone);
  CHECK((gone->worker == 1 && !gone->current && gone->holder == nullptr));
  CHECK_FALSE(p.workers[1].lost);
  CHECK_FALSE(p.workers.lost_permit("not-a-token"));
}

// What a part published, fact by fact, for a test to read.
struct item_facts final : fact_sink {
  std::vector<std::string> heard;
  void on(const fact::item_queued& f) override {
    heard.push_back("queued " + std::to_string(f.number) + (f.requeued ? " again" : "") + ", waiting " +
                    std::to_string(f.waiting));
  }
  void on(const fact::item_taken& f) override {
    heard.push_back("taken " + std::to_string(f.number) + ", waiting " + std::to_string(f.waiting));
  }
  void on(const fact::item_ended& f) override { heard.push_back("ended " + std::to_string(f.number) + " " + f.how); }
};

TEST_CASE("work items end once each, after they arrived, and say so on the bus") {
  sim::scheduler sched;
  fact_bus facts(sched, 1);
  item_facts heard;
  facts.subscribe(heard);
  CHECK_THROWS_AS(facts.subscribe(heard), assertion_failure);  // a subscriber hears each fact once
  const sim::duration_dist service = sim::duration_dist::fixed(5 * sim::ms);
  work_items items(facts, service, 1);
  CHECK_THROWS_AS(items.pop(), assertion_failure);
  world::arrival a;
  items.arrive(a, 0, 10 * sim::ms);
  items.arrive(a, 0, 10 * sim::ms);
  const work_item it = items.pop();
  CHECK(it.number == 1);
  CHECK(it.service_ns == 5 * sim::ms);
  CHECK(it.read_timeout_ns == 10 * sim::ms);
  items.requeue(it);
  const work_item second = items.pop();
  items.end(second, "completed", 0);
  const work_item again = items.pop();
  CHECK(again.number == 1);
  items.end(again, "deferred", 0);
  CHECK_THROWS_AS(items.end(again, "completed", 0), assertion_failure);  // both arrivals have ended
  CHECK(heard.heard == std::vector<std::string>{"queued 1, waiting 1", "queued 2, waiting 2", "taken 1, waiting 1",
                                                "queued 1 again, waiting 2", "taken 2, waiting 1", "ended 2 completed",
                                                "taken 1, waiting 0", "ended 1 deferred"});
}

TEST_CASE("the fact bus refuses a fact that breaks its part's postconditions") {
  sim::scheduler sched;
  fact_bus facts(sched, 2);
  item_facts heard;
  facts.subscribe(heard);
  const std::string token = "w0-1";
  CHECK_NOTHROW(facts.publish(fact::acquiring{1, token, 0, 1, 0}));
  CHECK_THROWS_AS(facts.publish(fact::acquiring{2, token, 0, 1, 0}), assertion_failure);   // no worker 2
  CHECK_THROWS_AS(facts.publish(fact::acquiring{0, token, -1, 1, 0}), assertion_failure);  // a negative count
  CHECK_THROWS_AS(facts.publish(fact::acquiring{0, token, 0, 0, 0}), assertion_failure);   // items count from 1
  CHECK_THROWS_AS(facts.publish(fact::portal_opened{{0, 1, 1, 2}, 1, true, 0}), assertion_failure);  // more open than asked
  CHECK_THROWS_AS(facts.publish(fact::portal_opened{{0, 1, 1, 1}, 1, true, -1}), assertion_failure);  // a negative service
  CHECK_THROWS_AS(facts.publish(fact::horizon_reached{0, 0, 2, 1}), assertion_failure);  // more holding than at work
  CHECK_THROWS_AS(facts.publish(fact::item_ended{0, "completed"}), assertion_failure);       // items count from 1
  CHECK_THROWS_AS(facts.publish(fact::run_ended{1, 2, false, 0, ""}), assertion_failure);   // more unended than arrived
  CHECK(heard.heard.empty());  // a refused fact reaches no subscriber
}

TEST_CASE("each lease invariant a scenario checks is one component from its row, heard before or after the trace") {
  parts p;
  CHECK(p.invariants.built() == l_count);  // every invariant checked by default
  CHECK(p.facts.subscribers() == l_count + 1);

  // checks.invariants names two: only their components are built.
  scenario::scenario sc = scenario::load_scenario_text(three_workers);
  sc.checks.invariants = {"liveness", "gate_inflight_le_cap"};
  sim::scheduler sched;
  world::run_record rec;
  rec.lease.emplace();
  lease_monitors monitors{sched, sc, 8, rec.metrics, *rec.lease};
  fact_bus facts{sched, 3};
  const lease_invariants two{monitors, facts};
  CHECK(two.built() == 2);
  CHECK(facts.subscribers() == 3);

  // The gate's count alone is judged after the script's trace entry (a violation's kept trace ends with
  // that script); every row names a lease invariant of the table.
  std::size_t after = 0;
  for (const lease_invariant_row& row : lease_invariant_rows) {
    if (row.phase == judged::after_trace) ++after;
    CHECK(check::applies(row.name, check::world_lease));
  }
  CHECK(after == 1);
}

TEST_CASE("the fact bus hands a fact only to the subscribers that handle it, in the order they subscribed") {
  struct ends_only final : fact_sink {
    std::vector<std::string>* log = nullptr;
    void on(const fact::item_ended& f) override { log->push_back(std::string("ends_only ") + f.how); }
  };
  static_assert(hears<item_facts, fact::item_queued> && hears<item_facts, fact::item_ended>);
  static_assert(!hears<ends_only, fact::item_queued> && hears<ends_only, fact::item_ended>);
  sim::scheduler sched;
  fact_bus facts(sched, 1);
  ends_only first;
  item_facts second;
  std::vector<std::string> log;
  first.log = &log;
  facts.subscribe(first);
  facts.subscribe(second);
  CHECK(facts.hearing<fact::item_queued>() == 1);
  CHECK(facts.hearing<fact::item_ended>() == 2);
  CHECK(facts.hearing<fact::script_ran>() == 0);
  facts.publish(fact::item_queued{1, 0, 1, false});
  facts.publish(fact::item_ended{1, "completed"});
  CHECK(log == std::vector<std::string>{"ends_only completed"});
  CHECK(second.heard == std::vector<std::string>{"queued 1, waiting 1", "ended 1 completed"});
}

TEST_CASE("the cause finder tells a portal violation's causes from the facts alone, and keeps the portal's counts") {
  parts p;
  lease_causes causes{p.sched, p.sc, false, std::nullopt, p.node, p.server};
  p.facts.subscribe(causes);
  const std::string token = "w0-1";
  // Worker 0 starts on item 1 (a 20s request), is granted its permit, and opens its connection.
  p.facts.publish(fact::acquiring{0, token, 0, 1, 20 * sim::sec});
  p.facts.publish(fact::permit_granted{0, token, 0, 0});
  p.facts.publish(fact::portal_opened{{0, 1, 2, 1}, 1, true, 20 * sim::sec});
  // 15s later worker 1's acquire reaps it while the request still runs.
  p.sched.run_until(15 * sim::sec);
  permit_loss reaped;
  reaped.by = permit_loss::how::reaped;
  reaped.at_ns = 15 * sim::sec;
  reaped.reaper = 1;
  p.facts.publish(fact::permit_lost{0, 1, reaped, true, -1, -1});
  std::vector<check::cause> out;
  causes.portal(out);  // the node's set is empty: the connection is covered by no permit
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == "lease_outlived");
  CHECK(out[0].detail == "permit w0-1 expired: a 20s request on a 15s lease, no renewal");
  // The worker leaves the connection open: the copy it keeps still says why.
  p.facts.publish(fact::connection_left{0, 1, -1});
  p.facts.publish(fact::left_item{0, 1});
  out.clear();
  causes.portal(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == "lease_outlived");
  // A portal fact whose counts are not those the causes kept is a broken invariant of ours.
  CHECK_THROWS_AS(p.facts.publish(fact::portal_opened{{1, 3, 2, 3}, 2, false, sim::sec}), assertion_failure);
  // A grant for an item its worker is not on, likewise.
  CHECK_THROWS_AS(p.facts.publish(fact::permit_granted{2, "w2-9", 0, 0}), assertion_failure);
}

TEST_CASE("lease coverage notes the phase a fault strikes each worker in, and the holders' state") {
  parts p;
  lease_coverage cov{p.sc, p.sched, p.node, p.server};
  p.facts.subscribe(cov);
  const std::string token = "w0-1";
  const auto bucket = [&](const std::string& name) {
    world::run_record rec;
    cov.write(rec, 2);
    for (const auto& [n, count] : rec.coverage)
      if (n == name) return count;
    FAIL("no bucket " << name);
    return std::uint64_t{0};
  };
  scenario::fault_spec pause;
  pause.kind = scenario::fault_kind::pause;
  pause.target = scenario::node_ref{scenario::node_ref::kind::worker, 0};
  pause.duration_ns = sim::sec;
  p.facts.publish(fact::fault_began{pause, "pause worker:0"});
  CHECK(bucket("pause while between requests") == 1);
  p.facts.publish(fact::acquiring{0, token, 0, 1, sim::sec});
  p.facts.publish(fact::granted{0, 1, token, 0, 1, 1});
  p.facts.publish(fact::call_sent{0, redis::script_op::renew});
  CHECK(cov.phase_of(0) == client_phase::renewing);
  p.facts.publish(fact::fault_began{pause, "pause worker:0"});
  CHECK(bucket("pause while renewing") == 1);
  p.facts.publish(fact::call_ended{0, redis::script_op::renew});
  CHECK(cov.phase_of(0) == client_phase::holding);
  // A fault of Redis strikes every live worker: worker 0 holding, the others between requests.
  scenario::fault_spec restart;
  restart.kind = scenario::fault_kind::redis_restart;
  restart.target = scenario::node_ref{scenario::node_ref::kind::redis, 0};
  p.facts.publish(fact::fault_began{restart, "redis_restart redis"});
  CHECK(bucket("redis_restart while holding") == 1);
  CHECK(bucket("redis_restart while between requests") == 1);
  CHECK(bucket("redis_restart while acquiring") == 0);
  CHECK(bucket("redis_restart with every permit taken") == 0);  // the node holds no permit
  p.facts.publish(fact::served{0, sim::sec});
  CHECK(cov.phase_of(0) == client_phase::releasing);
  p.facts.publish(fact::left_item{0, 1});
  CHECK(cov.phase_of(0) == client_phase::between);
  // A renewal's end without its start is a broken invariant of ours.
  CHECK_THROWS_AS(p.facts.publish(fact::call_ended{1, redis::script_op::renew}), assertion_failure);
  // A permit that leaves the set while its worker is still on the item is a near miss; one that leaves
  // after the worker moved on is not.
  const permit_loss reaped{};
  p.facts.publish(fact::permit_lost{0, 1, reaped, false, -1, -1});
  CHECK(bucket("a permit left the set under its holder") == 0);
  p.facts.publish(fact::permit_lost{0, 1, reaped, true, -1, -1});
  CHECK(bucket("a permit left the set under its holder") == 1);
  world::run_record rec;
  cov.write(rec, 2);
  CHECK(rec.coverage.size() == lease_bucket_count);
  CHECK(rec.coverage.back().first == "a permit left the set under its holder");
}

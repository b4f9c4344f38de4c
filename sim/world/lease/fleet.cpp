#include "sim/world/lease/fleet.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/system/system_error.hpp>
#include <algorithm>
#include <bit>
#include <limits>
#include <charconv>

#include "sim/world/lease_world.hpp"

namespace admit::world::lease {

namespace asio = boost::asio;

fleet::fleet(sim::scheduler& sched, network& net, const gate::lease_client_config& cfg, const scenario::scenario& sc,
             std::uint64_t seed)
    : sched_(sched) {
  for (std::int64_t i = 0; i < sc.fleet.workers; ++i) {
    auto w = std::make_unique<worker_state>();
    w->index = static_cast<std::size_t>(i);
    w->clock.spec = sc.fleet.clock_of(i);
    worker_link& link = w->link;
    link.transport = redis_transport{&net, w->index};
    link.jitter = sim::substream(seed, "jitter/" + std::to_string(i));
    worker_state* raw = w.get();
    link.client.emplace(
        sched_.get_executor(), link.transport, cfg, [this, raw] { return raw->clock.wall_ms(sched_.now_ns()); },
        [raw](std::int64_t ceiling) {
          return ceiling <= 0
                     ? 0
                     : static_cast<std::int64_t>(raw->link.jitter.uniform_u64(static_cast<std::uint64_t>(ceiling) + 1));
        });
    workers_.push_back(std::move(w));
  }
  idle_ = idle_set(workers_.size());
}

void fleet::use_processes(const scenario::process_spec& spec, std::uint64_t seed, const gate::lease_client_config& cfg,
                          std::span<const scenario::fault_spec> faults) {
  ADMIT_ASSERT(loop_ == nullptr, "the clients are chosen before the workers start");
  for (auto& w : workers_) {
    w->link.process = std::make_unique<process_client>(spec, w->index, seed, cfg, sched_);
    w->link.client->set_remote(w->link.process.get());
    // What the world can promise the worker's child (process_client.hpp, "Running ahead"): its wall clock
    // reads true time plus a fixed offset until its next clock step, when it does not drift. Nothing else
    // the world does reaches a waiting acquire but its crash, which kills the child.
    std::vector<vtime_ns> steps;
    for (const scenario::fault_spec& f : faults)
      if (f.kind == scenario::fault_kind::clock_step && f.target && f.target->k == scenario::node_ref::kind::worker &&
          f.target->worker == static_cast<std::int64_t>(w->index))
        steps.push_back(f.at_ns);
    std::sort(steps.begin(), steps.end());
    const worker_state* raw = w.get();
    w->link.process->set_promise([raw, steps = std::move(steps)](vtime_ns now) -> std::optional<msg::ahead> {
      if (raw->clock.spec.drift_ppm != 0) return std::nullopt;
      const std::int64_t base = lease_world_epoch_ms * 1'000'000 + raw->clock.spec.offset_ns + raw->clock.step_ns;
      if (base < 0) return std::nullopt;
      // A step at `now` itself may come after this input, in the same instant.
      const auto next = std::lower_bound(steps.begin(), steps.end(), now);
      const vtime_ns last = msg::ahead::last_until(base);
      const vtime_ns until = next == steps.end() ? last : std::min(last, *next - 1);
      return msg::ahead{until, base};
    });
  }
}

std::optional<world::process_exchanges> fleet::children_exchanges() const {
  std::optional<world::process_exchanges> out;
  for (const auto& w : workers_) {
    if (!w->link.process) continue;
    if (!out) out.emplace();
    out->messages += w->link.process->messages();
    out->wakes_ahead += w->link.process->wakes_ahead();
  }
  return out;
}

const process::session_failure* fleet::process_failure() const noexcept {
  for (const auto& w : workers_)
    if (w->link.process)
      if (const process::session_failure* f = w->link.process->failed()) return f;
  return nullptr;
}

void fleet::start(loop_fn loop, park_fn park) {
  loop_ = std::move(loop);
  park_ = std::move(park);
  for (auto& w : workers_) spawn(*w);
}

void fleet::restart(std::size_t wi) {
  worker_state& w = *workers_[wi];
  ADMIT_ASSERT(!w.alive, "only a crashed worker restarts");
  w.alive = true;
  w.renewal.retired = false;  // a restarted client starts afresh
  w.exited = false;           // a restart runs the worker loop anew, even one that had exited
  w.drained = false;
  spawn(w);
}

void fleet::spawn(worker_state& w) {
  w.started = false;
  // As co_spawn's first step: inline when an event runs (a restart), queued otherwise (the fleet's start).
  asio::dispatch(sched_.get_executor(), [this, wi = w.index, gen = w.generation] { begin(wi, gen, false); });
}

void fleet::begin(std::size_t wi, std::uint64_t gen, bool woken) {
  worker_state& w = *workers_[wi];
  if (woken && (w.generation != gen || !w.alive)) return;  // crashed while parked: that generation never ran
  if (clear_to_run(wi, gen) && park_(wi, gen, woken)) return;
  launch(w, gen);
}

void fleet::park_unstarted(std::size_t wi, std::uint64_t gen) {
  worker_state& w = *workers_[wi];
  ADMIT_ASSERT(!w.started && !w.resume, "only a worker whose loop has not begun parks without a coroutine");
  set_idle(wi, true);
  w.resume = [this, wi, gen] { begin(wi, gen, true); };
}

void fleet::launch(worker_state& w, std::uint64_t gen) {
  if (w.kill) w.retired_kills.push_back(std::move(w.kill));
  w.kill = std::make_unique<asio::cancellation_signal>();
  asio::co_spawn(sched_.get_executor(), loop_(w.index, gen),
                 asio::bind_cancellation_slot(w.kill->slot(), [this](std::exception_ptr e) {
                   if (!e || tearing_down_) return;
                   try {
                     std::rethrow_exception(e);
                   } catch (const worker_crashed&) {
                   } catch (const boost::system::system_error& se) {
                     if (se.code() != asio::error::operation_aborted) throw;
                   }
                 }));
}

sim::awaitable<void> fleet::wait_until_clear(std::size_t wi, std::uint64_t gen) {
  worker_state& w = *workers_[wi];
  for (;;) {
    if (w.generation != gen || !w.alive) throw worker_crashed{};
    if (sched_.now_ns() >= w.paused_until) co_return;
    co_await sim::sleep_for(w.paused_until - sched_.now_ns());
  }
}

bool fleet::crash(std::size_t wi, const std::function<void(const work_item&)>& ended) {
  worker_state& w = *workers_[wi];
  ADMIT_ASSERT(w.alive, "a dead worker does not crash again");
  w.alive = false;
  ++w.generation;
  // The wait goes with the generation's coroutine, and its renewer stops.
  w.renewal.portal_wait = nullptr;
  if (w.renewal.holding) *w.renewal.holding = false;
  w.renewal.holding.reset();
  if (w.current) {
    ended(*w.current);
    w.current.reset();
  }
  const bool held = w.holding.has_value();
  drop_holding(wi);  // its permit stays in Redis until the lease expires
  if (w.link.process) w.link.process->crashed();  // its child dies with it
  set_idle(wi, false);
  // A loop that has not run yet stops at its first checkpoint; a coroutine
  // cancelled before it first runs would end in an exception outside its body.
  if (w.started) w.kill->emit(asio::cancellation_type::terminal);
  wake(w);
  ADMIT_ASSERT(!w.idle, "a crashed worker is not idle");
  ADMIT_ASSERT(!w.holding, "a crashed worker holds nothing");
  return held;
}

void fleet::tear_down() {
  tearing_down_ = true;
  for (auto& w : workers_) w->resume = {};
}

void fleet::wake_all_idle() {
  for (std::size_t i = idle_.next(); i != idle_set::npos; i = idle_.next(i + 1)) {
    set_idle(i, false);
    wake(*workers_[i]);
  }
}

std::string fleet::token_of(std::size_t wi, std::uint64_t number) {
  char digits[24];
  std::string t(1, 'w');
  t.append(digits, std::to_chars(digits, digits + sizeof digits, wi).ptr);
  t.push_back('-');
  t.append(digits, std::to_chars(digits, digits + sizeof digits, number).ptr);
  return t;
}

const worker_state* fleet::holder_of(std::string_view token) const {
  for (const auto& w : workers_)
    if (w->holding && *w->holding == token) return w.get();
  return nullptr;
}

std::optional<std::pair<std::size_t, std::uint64_t>> fleet::parse_token(std::string_view token, std::size_t workers) {
  std::size_t wi = 0;
  std::uint64_t number = 0;
  if (token.size() < 4 || token[0] != 'w') return std::nullopt;
  const char* end = token.data() + token.size();
  const auto [dash, ec] = std::from_chars(token.data() + 1, end, wi);
  if (ec != std::errc{} || dash == end || *dash != '-' || wi >= workers) return std::nullopt;
  const auto [last, ec2] = std::from_chars(dash + 1, end, number);
  if (ec2 != std::errc{}) return std::nullopt;
  if (last != end) {
    // A fresh token of the same acquisition: ".<n>", n >= 1 (on_lost_acquire "new_token").
    std::uint64_t fresh = 0;
    if (*last != '.') return std::nullopt;
    const auto [tail, ec3] = std::from_chars(last + 1, end, fresh);
    if (ec3 != std::errc{} || tail != end || fresh == 0 || last[1] == '0') return std::nullopt;
  }
  return std::pair{wi, number};
}

const worker_state* fleet::rolled_back(std::string_view token, const permit_rollback& how) const {
  ADMIT_ASSERT(how.kept_score < how.lost_score, "a rollback brings back an older score");
  const auto named = parse_token(token);
  if (!named) return nullptr;
  const worker_state& w = *workers_[named->first];
  return w.holding && *w.holding == token ? &w : nullptr;
}

std::optional<fleet::loss_of> fleet::lost_permit(std::string_view token) {
  // The token names its worker: holding it, or with the grant on its way back.
  const auto named = parse_token(token);
  if (!named) return std::nullopt;
  worker_state& w = *workers_[named->first];
  const bool holds = w.holding && *w.holding == token;
  // Not the item's permit if its worker holds another token of the item (a fresh token's grant, the lost
  // attempt's left behind).
  const bool current = w.current && w.current->number == named->second && (!w.holding || holds);
  ADMIT_ASSERT(!holds || current, "a worker holds only the permit of the item it is on");
  if (current) w.lost = true;
  return loss_of{named->first, named->second, current, holds ? &w : nullptr};
}

void fleet::lost_all_permits() {
  for (auto& w : workers_)
    if (w->current) w->lost = true;
}

void fleet::set_nodes(network* const* nets, std::size_t nodes, bool all) {
  ADMIT_ASSERT(nodes >= 1, "a world has at least one Redis node");
  ADMIT_ASSERT(nodes <= 16, "a worker's node bits count at most 16 nodes");
  nodes_ = nodes;
  all_ = all;
  granted_at_ = all ? nodes : majority();
  held_from_ = all ? 1 : majority();
  for (auto& w : workers_) {
    w->link.transport.nets = nets;
    w->link.transport.nodes = nodes;
  }
}

bool fleet::granted_on(std::size_t wi, std::string_view token, std::size_t node) {
  worker_state& w = *workers_[wi];
  if (!w.current || w.token != token) return false;  // a late grant of an item given up
  w.node_bits = static_cast<std::uint16_t>(w.node_bits | (1U << node));
  return static_cast<std::size_t>(std::popcount(w.node_bits)) >= granted_at_;
}

void fleet::released_on(std::size_t wi, std::string_view token, std::size_t node) {
  worker_state& w = *workers_[wi];
  if (!w.current || w.token != token) return;
  w.node_bits = static_cast<std::uint16_t>(w.node_bits & ~(1U << node));
}

bool fleet::lost_on(std::string_view token, std::size_t node) {
  const auto named = parse_token(token);
  if (!named) return false;
  worker_state& w = *workers_[named->first];
  if (!w.current || w.current->number != named->second) return false;
  // Under "all" a token short of every node was never a permit (its round released it): no loss.
  if (all_ && !w.permit_granted) {
    w.node_bits = static_cast<std::uint16_t>(w.node_bits & ~(1U << node));
    return false;
  }
  const auto before = static_cast<std::size_t>(std::popcount(w.node_bits));
  w.node_bits = static_cast<std::uint16_t>(w.node_bits & ~(1U << node));
  const auto after = static_cast<std::size_t>(std::popcount(w.node_bits));
  return before >= held_from_ && after < held_from_;
}

void fleet::audit() const {
  std::int64_t holding = 0;
  for (const auto& w : workers_) {
    holding += w->holding.has_value();
    ADMIT_ASSERT(idle_.contains(w->index) == w->idle, "a worker is in the idle set exactly while it is idle");
    ADMIT_ASSERT(w->alive || !w->idle, "a dead worker is not idle");
    ADMIT_ASSERT(w->alive || !w->holding, "a dead worker holds no permit");
  }
  ADMIT_ASSERT(holding == holders_, "the holders count is the number of workers holding a permit");
}

}  // namespace admit::world::lease

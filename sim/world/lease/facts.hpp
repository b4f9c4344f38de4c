// facts: what the lease world's parts publish, and who hears it.
//
// A part of the lease world (the network, the Redis side, the portal, the
// fleet's worker loop, the work queue, the fault injector) does its job and
// says what happened as a typed fact: a script ran (with the holders after
// it), a permit was taken from a holder still working, a connection opened or
// closed at the portal, a worker was granted, gave up, crashed; the run
// ended. It does not judge what happened and it does not know who listens.
// The monitors (invariants, probes, metrics, trace) and the timeline
// subscribe to the bus (fact_bus) and each makes of a fact what it needs.
//
// A fact lives for the publish call: it refers to the publisher's data (a
// token, the holders after a script) instead of copying it, and the parts of
// it that cost to make (the now a script compared with, a reply's text) are
// callables asked only by a subscriber that needs them (fn_ref). No
// subscriber keeps a reference into a fact past its handler.
//
// Every fact is checked as it is published (`sound`): the worker it names is
// one of the fleet's, counts are never negative, a level's parts agree. These
// are the parts' postconditions, checked once at the one place every fact
// passes; a fact that fails one is a bug of admitsim's, never of the user's
// input.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gate/admit_assert.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/sorted_set.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease/permit_loss.hpp"

namespace admit::world::lease {

using sim::vtime_ns;

// A callable referred to, not owned: what a fact offers to compute on demand.
// It refers to a callable that outlives the publish call (a lambda written in
// the publishing expression does).
template <class Sig>
class fn_ref;
template <class R>
class fn_ref<R()> {
 public:
  fn_ref() = default;
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, fn_ref> && std::is_invocable_r_v<R, F&>)
  fn_ref(F&& f) noexcept  // NOLINT(google-explicit-constructor): a lambda where a fn_ref is asked
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}
  explicit operator bool() const noexcept { return call_ != nullptr; }
  R operator()() const {
    ADMIT_ASSERT(call_ != nullptr, "a fact's callable is asked only when the fact offers it");
    return call_(obj_);
  }

 private:
  void* obj_ = nullptr;
  R (*call_)(void*) = nullptr;
};

namespace fact {

// --- the network ------------------------------------------------------------
// Worker `worker` sent a call to Redis, for `op`.
struct call_sent {
  std::size_t worker;
  redis::script_op op;
};
// Its call for `op` ended: a reply, an error, a socket timeout, or its process's crash.
struct call_ended {
  std::size_t worker;
  redis::script_op op;
};
// A call ended in an error of Redis's or the network's (a socket timeout, a
// refused connection), not in its process's crash.
struct call_failed {
  std::size_t worker;
};
// A call ran on the server but its reply cannot reach its worker: Redis went down (else the link was cut).
struct reply_lost {
  std::size_t worker;
  bool redis_down;
};
// A call is about to run on the server after its client gave up on it (a paused server runs it late).
struct ran_late {
  std::size_t worker;
};

// --- the Redis side -----------------------------------------------------------
// A permit of a holder still working left the holders: reaped by a script
// (worker `by`'s), or gone with its key's expiry (`with_key`).
struct permit_taken {
  std::string_view member;
  std::size_t holder;
  bool with_key;
};

// A script (or a protocol's command) ran and its reply was read.
struct script_ran {
  std::size_t worker;
  redis::script_op op;
  const std::string& token;
  const redis::script_reply& reply;
  // The members of the gate key after it, expired ones not yet removed too (a quorum run: the fullest node's).
  std::int64_t members;
  // An acquire: the token was a member before it ran.
  bool was_member = false;

  // An acquire whose script ran (a NOSCRIPT reply ran nothing): the holders
  // after it, for expired_leases_reaped and liveness's progress rule. A score
  // at or below server_now_ms - expiry_offset_ms is past its expiry by the
  // server's clock (the offset is the lease for scores that are the time of
  // acquiring, 0 for scores that are expiries).
  bool judged = false;
  const redis::sorted_set* holders_after = nullptr;  // nullptr: the key is gone
  std::int64_t server_now_ms = 0;
  std::int64_t expiry_offset_ms = 0;
  // The now the script compared scores with (asked only for a permit it left past its expiry), and
  // whether it was the caller's clock (passed whole as an argument).
  fn_ref<std::int64_t()> script_now_ms;
  bool script_now_callers = false;

  // The answer counts toward progress (one node's acquire, read by its rule, not the non-atomic
  // check of a check-then-add); `reply_text` is the answer as a sentence shows it.
  bool progress = false;
  fn_ref<std::string()> reply_text;

  // A protocol whose holders count free permits: the counter after it and the holders (this node's).
  std::optional<std::int64_t> free;
  std::int64_t held = 0;
};

// The add of a non-atomic check-then-add (the mutant's second round trip).
struct split_add {
  std::size_t worker;
  const std::string& token;
  std::int64_t members;
};

// The user's script failed (the run stops: nothing after it is judged).
struct script_failed {
  std::size_t worker;
  std::string_view operation;
};
// A reply its rule reads as a grant for a token the holders do not show (the run stops).
struct reply_inconsistent {
  std::size_t worker;
  std::string_view token;
};

// --- the permits' story (what a violation's causes tell) -------------------------
// The server granted worker `worker` the permit `token` of its current item, the first time (a quorum run:
// once enough nodes hold it); the server's clock against true time and the worker's clock steps then.
struct permit_granted {
  std::size_t worker;
  std::string_view token;
  vtime_ns server_offset_ns;
  vtime_ns clock_step_ns;
};
// The server kept renewed the permit `token` its worker holds.
struct permit_renewed {
  std::size_t worker;
  std::string_view token;
};
// check_then_add: the count of worker `worker`'s acquire saw `members` (its grant is the add, later).
struct permit_counted {
  std::size_t worker;
  std::int64_t members;
};
// The permit of item `number` of worker `worker` left the set (`how`). `current`: the worker is still on
// that item (holding its permit or with the grant on its way back), and its pause, if it paused.
struct permit_lost {
  std::size_t worker;
  std::uint64_t number;
  const permit_loss& how;
  bool current;
  vtime_ns paused_from_ns;
  vtime_ns paused_until_ns;
};
// A restart or failover kept the permit `token`, which worker `worker` holds, with an older score than its
// last renewal had set.
struct permit_rolled_back {
  std::size_t worker;
  std::string_view token;
  const permit_rollback& how;
};

// --- the portal ---------------------------------------------------------------
// The portal's counts as a connection changed: `attempted` connections asked
// for (open, plus refused attempts still counted), `open` of them open, its true cap.
struct portal_counts {
  std::size_t worker;
  std::int64_t attempted;
  std::int64_t cap;
  std::int64_t open;
};
// Worker's attempt was refused (reject_429): `filled` is the refusal's record, to be filled with what
// fills the portal now.
struct portal_refused {
  portal_counts at;
  std::uint64_t number;
  bool under_permit;  // false: sent without one (mutation fail_open)
};
struct portal_opened {
  portal_counts at;
  std::uint64_t number;
  bool under_permit;   // false: sent without one (mutation fail_open)
  vtime_ns service_ns;  // the work it asked for
};
// Worker `worker` left the connection of item `number` open: the item is over for it, or (crashed_ns >= 0)
// it crashed.
struct connection_left {
  std::size_t worker;
  std::uint64_t number;
  vtime_ns crashed_ns;
};
// A refused attempt stopped counting.
struct portal_refusal_over {
  portal_counts at;
};
struct portal_closed {
  portal_counts at;
  std::uint64_t number;
};
// A worker's client left its call: at its read timeout, or given up (a lost renewal's abort).
struct client_left {
  std::size_t worker;
  std::uint64_t number;
  std::int64_t open;
  bool read_timeout;
  bool under_permit;
};

// --- the workers ------------------------------------------------------------
// It starts on item `number` (its request `service_ns` long) and asks for the item's permit.
struct acquiring {
  std::size_t worker;
  const std::string& token;
  std::int64_t holders;
  std::uint64_t number;
  vtime_ns service_ns;
};
// It is done with item `number` (ended, deferred or put back); a crash ends its item too (worker_crashed).
struct left_item {
  std::size_t worker;
  std::uint64_t number;
};
// Its loop found the queue empty after the last arrival, and returned.
struct worker_drained {
  std::size_t worker;
};
// A crashed worker came back: its next generation starts afresh.
struct worker_restarted {
  std::size_t worker;
};
// Broken on purpose (fail_open): no permit, and the request goes out anyway.
struct sent_without_permit {
  std::size_t worker;
  const std::string& token;
  std::int64_t holders;
};
// Its acquire gave up (`why`, the acquire's error): the item deferred, or (`requeued`, run_fleet) put back
// at the queue's tail as the worker's loop ended.
struct gave_up {
  std::size_t worker;
  const std::string& token;
  std::string_view why;
  std::int64_t holders;
  bool unreachable;
  bool requeued;
};
struct granted {
  std::size_t worker;
  std::uint64_t number;
  const std::string& token;
  vtime_ns waited_ns;
  std::int64_t attempts;
  std::int64_t holders;
};
// Its portal call under a permit took `service_ns`.
struct served {
  std::size_t worker;
  vtime_ns service_ns;
};
// Its release for item `number` got no confirmation (the lease's expiry is the backstop).
struct release_failed {
  std::size_t worker;
  std::uint64_t number;
};
struct renewal_lost {
  std::size_t worker;
  const std::string& token;
  std::int64_t holders;
  bool stops_new_work;  // the protocol's on_renewal_lost stop_new_work: it takes no new item until a restart
};
struct worker_crashed {
  std::size_t worker;
  bool held;             // it held a permit
  std::uint64_t item;    // the item it held a permit for (0: none)
};

// --- the work items ---------------------------------------------------------
// An item joined the queue's tail: an arrival, or (`requeued`) an item put back. `waiting` after it.
struct item_queued {
  std::uint64_t number;
  vtime_ns arrived_ns;
  std::size_t waiting;
  bool requeued;
};
struct item_taken {
  std::uint64_t number;
  std::size_t waiting;
};
// `how`: "completed" or the reason it was refused (the report's key).
struct item_ended {
  std::uint64_t number;
  const char* how;
};

// --- faults -------------------------------------------------------------------
// A fault of the schedule began; `what` names it ("pause worker:1").
struct fault_began {
  const scenario::fault_spec& spec;
  std::string_view what;
};

// --- the end ------------------------------------------------------------------
// The clock reached checks.liveness_horizon.
struct horizon_reached {
  vtime_ns at_ns;
  std::uint64_t unended;  // items that arrived and had not ended
  std::int64_t holders;   // workers holding a permit
  std::int64_t at_work;   // workers on an item
};
// The run finished (not stopped, not inconclusive): what is left to judge liveness by.
struct run_ended {
  std::uint64_t arrived;
  std::uint64_t unended;       // items that never ended
  bool arrivals_pending;       // arrivals still to come
  std::int64_t permits_left;   // permits live one lease after the end by the server's clock, every node
  std::string_view where;      // " (on node 1, node 2)" for the further nodes holding some, else ""
};

// --- postconditions of the parts, checked as a fact is published ---------------
inline bool sound(const call_sent& f, std::size_t w) { return f.worker < w; }
inline bool sound(const call_failed& f, std::size_t w) { return f.worker < w; }
inline bool sound(const call_ended& f, std::size_t w) { return f.worker < w; }
inline bool sound(const reply_lost& f, std::size_t w) { return f.worker < w; }
inline bool sound(const ran_late& f, std::size_t w) { return f.worker < w; }
inline bool sound(const permit_taken& f, std::size_t w) { return f.holder < w && !f.member.empty(); }
inline bool sound(const script_ran& f, std::size_t w) {
  const bool acquire = f.op == redis::script_op::acquire;
  return f.worker < w && f.members >= 0 && f.held >= 0 && (!f.was_member || acquire) && (!f.judged || acquire) &&
         (!f.judged || static_cast<bool>(f.script_now_ms)) && (!f.progress || (f.judged && f.reply_text)) &&
         (!f.progress || f.reply.ok()) &&
         (f.holders_after == nullptr || f.held == 0 || f.held == static_cast<std::int64_t>(f.holders_after->size()));
}
inline bool sound(const split_add& f, std::size_t w) { return f.worker < w && f.members >= 1; }
inline bool sound(const script_failed& f, std::size_t w) { return f.worker < w && !f.operation.empty(); }
inline bool sound(const reply_inconsistent& f, std::size_t w) { return f.worker < w; }
inline bool sound(const permit_granted& f, std::size_t w) { return f.worker < w && !f.token.empty(); }
inline bool sound(const permit_renewed& f, std::size_t w) { return f.worker < w && !f.token.empty(); }
inline bool sound(const permit_counted& f, std::size_t w) { return f.worker < w && f.members >= 0; }
inline bool sound(const permit_lost& f, std::size_t w) {
  return f.worker < w && f.number >= 1 && f.how.at_ns >= 0 && (f.paused_from_ns < 0 || f.paused_until_ns >= f.paused_from_ns);
}
inline bool sound(const permit_rolled_back& f, std::size_t w) {
  return f.worker < w && !f.token.empty() && f.how.kept_score < f.how.lost_score;
}
inline bool sound(const portal_counts& f, std::size_t w) {
  return f.worker < w && f.cap >= 1 && f.open >= 0 && f.attempted >= f.open;
}
inline bool sound(const portal_refused& f, std::size_t w) {
  return sound(f.at, w) && f.number >= 1 && f.at.attempted > f.at.open && f.at.open >= f.at.cap;
}
inline bool sound(const portal_opened& f, std::size_t w) {
  return sound(f.at, w) && f.number >= 1 && f.at.open >= 1 && f.service_ns >= 0;
}
inline bool sound(const connection_left& f, std::size_t w) { return f.worker < w && f.number >= 1 && f.crashed_ns >= -1; }
inline bool sound(const portal_refusal_over& f, std::size_t w) { return sound(f.at, w); }
inline bool sound(const portal_closed& f, std::size_t w) { return sound(f.at, w) && f.number >= 1; }
inline bool sound(const client_left& f, std::size_t w) { return f.worker < w && f.number >= 1 && f.open >= 0; }
inline bool sound(const acquiring& f, std::size_t w) {
  return f.worker < w && !f.token.empty() && f.holders >= 0 && f.number >= 1 && f.service_ns >= 0;
}
inline bool sound(const left_item& f, std::size_t w) { return f.worker < w && f.number >= 1; }
inline bool sound(const worker_drained& f, std::size_t w) { return f.worker < w; }
inline bool sound(const worker_restarted& f, std::size_t w) { return f.worker < w; }
inline bool sound(const sent_without_permit& f, std::size_t w) { return f.worker < w && f.holders >= 0; }
inline bool sound(const gave_up& f, std::size_t w) {
  return f.worker < w && !f.token.empty() && !f.why.empty() && f.holders >= 0;
}
inline bool sound(const granted& f, std::size_t w) {
  return f.worker < w && f.number >= 1 && f.waited_ns >= 0 && f.attempts >= 1 && f.holders >= 1;
}
inline bool sound(const served& f, std::size_t w) { return f.worker < w && f.service_ns >= 0; }
inline bool sound(const release_failed& f, std::size_t w) { return f.worker < w && f.number >= 1; }
inline bool sound(const renewal_lost& f, std::size_t w) { return f.worker < w && f.holders >= 0; }
inline bool sound(const worker_crashed& f, std::size_t w) { return f.worker < w && (f.item == 0 || f.held); }
inline bool sound(const item_queued& f, std::size_t) { return f.number >= 1 && f.arrived_ns >= 0 && f.waiting >= 1; }
inline bool sound(const item_taken& f, std::size_t) { return f.number >= 1; }
inline bool sound(const item_ended& f, std::size_t) { return f.number >= 1 && f.how != nullptr && *f.how != '\0'; }
inline bool sound(const fault_began& f, std::size_t) { return !f.what.empty(); }
inline bool sound(const horizon_reached& f, std::size_t w) {
  return f.at_ns >= 0 && f.holders >= 0 && f.at_work >= f.holders && f.at_work <= static_cast<std::int64_t>(w);
}
inline bool sound(const run_ended& f, std::size_t) {
  return f.unended <= f.arrived && f.permits_left >= 0 && (f.where.empty() || f.permits_left >= 1);
}

}  // namespace fact

// What hears the facts: one handler per fact, each doing nothing unless overridden.
class fact_sink {
 public:
  virtual void on(const fact::call_sent&) {}
  virtual void on(const fact::call_failed&) {}
  virtual void on(const fact::call_ended&) {}
  virtual void on(const fact::reply_lost&) {}
  virtual void on(const fact::ran_late&) {}
  virtual void on(const fact::permit_taken&) {}
  virtual void on(const fact::script_ran&) {}
  virtual void on(const fact::split_add&) {}
  virtual void on(const fact::script_failed&) {}
  virtual void on(const fact::reply_inconsistent&) {}
  virtual void on(const fact::permit_granted&) {}
  virtual void on(const fact::permit_renewed&) {}
  virtual void on(const fact::permit_counted&) {}
  virtual void on(const fact::permit_lost&) {}
  virtual void on(const fact::permit_rolled_back&) {}
  virtual void on(const fact::portal_refused&) {}
  virtual void on(const fact::portal_opened&) {}
  virtual void on(const fact::connection_left&) {}
  virtual void on(const fact::portal_refusal_over&) {}
  virtual void on(const fact::portal_closed&) {}
  virtual void on(const fact::client_left&) {}
  virtual void on(const fact::acquiring&) {}
  virtual void on(const fact::left_item&) {}
  virtual void on(const fact::worker_drained&) {}
  virtual void on(const fact::worker_restarted&) {}
  virtual void on(const fact::sent_without_permit&) {}
  virtual void on(const fact::gave_up&) {}
  virtual void on(const fact::granted&) {}
  virtual void on(const fact::served&) {}
  virtual void on(const fact::release_failed&) {}
  virtual void on(const fact::renewal_lost&) {}
  virtual void on(const fact::worker_crashed&) {}
  virtual void on(const fact::item_queued&) {}
  virtual void on(const fact::item_taken&) {}
  virtual void on(const fact::item_ended&) {}
  virtual void on(const fact::fault_began&) {}
  virtual void on(const fact::horizon_reached&) {}
  virtual void on(const fact::run_ended&) {}

  virtual ~fact_sink() = default;
};

// Every fact, in one list: a fact's place in it is its kind (the bus's index).
using every_fact = std::tuple<fact::call_sent,
                                 fact::call_failed,
                                 fact::call_ended,
                                 fact::reply_lost,
                                 fact::ran_late,
                                 fact::permit_taken,
                                 fact::script_ran,
                                 fact::split_add,
                                 fact::script_failed,
                                 fact::reply_inconsistent,
                                 fact::permit_granted,
                                 fact::permit_renewed,
                                 fact::permit_counted,
                                 fact::permit_lost,
                                 fact::permit_rolled_back,
                                 fact::portal_refused,
                                 fact::portal_opened,
                                 fact::connection_left,
                                 fact::portal_refusal_over,
                                 fact::portal_closed,
                                 fact::client_left,
                                 fact::acquiring,
                                 fact::left_item,
                                 fact::worker_drained,
                                 fact::worker_restarted,
                                 fact::sent_without_permit,
                                 fact::gave_up,
                                 fact::granted,
                                 fact::served,
                                 fact::release_failed,
                                 fact::renewal_lost,
                                 fact::worker_crashed,
                                 fact::item_queued,
                                 fact::item_taken,
                                 fact::item_ended,
                                 fact::fault_began,
                                 fact::horizon_reached,
                                 fact::run_ended>;
inline constexpr std::size_t fact_kinds = std::tuple_size_v<every_fact>;

template <class F, std::size_t I = 0>
constexpr std::size_t kind_of() {
  static_assert(I < fact_kinds, "a fact of every_fact");
  if constexpr (std::is_same_v<F, std::tuple_element_t<I, every_fact>>) return I;
  else return kind_of<F, I + 1>();
}

// Whether the subscriber type S hears F: it declares its own on(const F&). (A
// subscriber declares the handlers it has and no using-declaration of the
// base's, so a fact it does not declare is one it does not hear.)
template <class S, class F>
concept hears = requires { static_cast<void (S::*)(const F&)>(&S::on); };

// The bus: a subscriber hears the facts it has handlers for, each in the
// order the subscribers subscribed, at the instant it is published (a fact is
// no event: it adds none and moves no clock). Which facts a subscriber hears
// is found from its type as it subscribes, so that a fact is handed only to
// those that handle it. The world subscribes its invariants and monitors
// first, so that a violation's trace and windows are in place before the
// timeline samples the same instant.
class fact_bus {
 public:
  static constexpr std::size_t max_sinks = 10;

  // `workers`: the fleet's size, which every worker a fact names is below.
  fact_bus(const sim::scheduler& sched, std::size_t workers) : sched_(sched), workers_(workers) {
    ADMIT_ASSERT(workers >= 1, "a lease world has at least one worker (the loader refuses 0)");
  }

  template <class S>
    requires std::is_base_of_v<fact_sink, S>
  void subscribe(S& s) {
    ADMIT_ASSERT(count_ < max_sinks, "a lease world has a fixed few subscribers");
    for (std::size_t i = 0; i < count_; ++i) ADMIT_ASSERT(all_[i] != &s, "a subscriber hears each fact once");
    all_[count_++] = &s;
    std::size_t heard = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((hears<S, std::tuple_element_t<I, every_fact>> ? (add(I, s), ++heard) : 0), ...);
    }(std::make_index_sequence<fact_kinds>{});
    ADMIT_ASSERT(heard >= 1, "a subscriber hears at least one fact");
  }
  std::size_t subscribers() const noexcept { return count_; }
  // How many subscribers hear F.
  template <class F>
  std::size_t hearing() const noexcept {
    return by_kind_[kind_of<F>()].count;
  }

  template <class F>
  void publish(const F& f) {
    ADMIT_ASSERT(fact::sound(f, workers_), "a part publishes a fact that holds its own postconditions");
    ADMIT_ASSERT(sched_.now_ns() >= last_ns_, "facts are published in time order");
    last_ns_ = sched_.now_ns();
    const listeners& l = by_kind_[kind_of<F>()];
    for (std::size_t i = 0; i < l.count; ++i) l.sinks[i]->on(f);
  }

 private:
  struct listeners {
    std::array<fact_sink*, max_sinks> sinks{};
    std::size_t count = 0;
  };
  void add(std::size_t kind, fact_sink& s) {
    listeners& l = by_kind_[kind];
    ADMIT_ASSERT(l.count < max_sinks, "no more listeners to a fact than subscribers");
    l.sinks[l.count++] = &s;
  }

  const sim::scheduler& sched_;
  std::size_t workers_;
  std::array<fact_sink*, max_sinks> all_{};
  std::size_t count_ = 0;
  std::array<listeners, fact_kinds> by_kind_{};
  vtime_ns last_ns_ = 0;
};

}  // namespace admit::world::lease

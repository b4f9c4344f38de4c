// Properties of the FIFO gate's two containers, each against a standard one:
// ticket_index against std::map, waiter_queue against std::deque.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <sstream>
#include <vector>

#include "gate/fifo/ticket_index.hpp"
#include "gate/fifo/waiter_queue.hpp"

using admit::fifo::ticket_index;
using admit::fifo::waiter;
using admit::fifo::waiter_queue;

namespace {

rc::detail::TestParams fixed_params() {
  rc::detail::TestParams params;
  params.seed = 0x5EED'F1F0'0001ull;
  params.maxSuccess = 300;
  params.maxSize = 400;
  return params;
}

void require_holds(const char* id, const rc::detail::TestResult& result) {
  std::ostringstream out;
  rc::detail::printResultMessage(result, out);
  INFO(id << ": " << out.str());
  REQUIRE(result.is<rc::detail::SuccessResult>());
}

}  // namespace

TEST_CASE("ticket_index behaves like a map under insert and erase", "[fifo][containers]") {
  // Goal: probing and backward-shift deletion never lose or invent a key. Method: random ops on a crowded key range, compare with std::map.
  rc::detail::TestMetadata metadata{"ticket_index", "ticket_index vs std::map"};
  const auto result = rc::detail::checkTestable(
      [] {
        // A narrow key range forces repeated insert/erase of the same keys;
        // a few huge keys check that no value of the id is special.
        const auto keys = *rc::gen::container<std::vector<std::uint64_t>>(rc::gen::oneOf(
            rc::gen::inRange<std::uint64_t>(0, 64), rc::gen::element(~std::uint64_t{0}, ~std::uint64_t{0} - 1, std::uint64_t{1} << 63)));
        ticket_index index;
        std::map<std::uint64_t, std::uint32_t> model;
        std::uint32_t next_value = 0;
        for (const std::uint64_t key : keys) {
          if (model.count(key) != 0) {
            RC_ASSERT(index.erase(key));
            model.erase(key);
          } else {
            index.insert(key, next_value);
            model[key] = next_value++;
          }
          RC_ASSERT(index.size() == model.size());
          RC_ASSERT(index.slot_count() >= 2 * index.size());
          for (std::uint64_t probe = 0; probe < 64; ++probe) {
            const std::uint32_t* found = index.find(probe);
            const auto it = model.find(probe);
            RC_ASSERT((found != nullptr) == (it != model.end()));
            if (found != nullptr) RC_ASSERT(*found == it->second);
          }
          for (const auto& [k, v] : model) {
            const std::uint32_t* found = index.find(k);
            RC_ASSERT(found != nullptr);
            RC_ASSERT(*found == v);
          }
        }
        for (const auto& [k, v] : model) RC_ASSERT(index.erase(k));
        RC_ASSERT(index.size() == 0u);
        RC_ASSERT(!index.erase(0));
      },
      metadata, fixed_params());
  require_holds("ticket_index", result);
}

TEST_CASE("waiter_queue behaves like a deque with removal from the middle", "[fifo][containers]") {
  // Goal: the slab-linked queue keeps FIFO order through removals and node reuse. Method: random ops, compare with std::deque.
  rc::detail::TestMetadata metadata{"waiter_queue", "waiter_queue vs std::deque"};
  const auto result = rc::detail::checkTestable(
      [] {
        const auto ops = *rc::gen::container<std::vector<std::uint8_t>>(rc::gen::inRange<std::uint8_t>(0, 3));
        waiter_queue queue;
        std::deque<std::pair<waiter_queue::node_id, waiter>> model;
        std::uint64_t next_ticket = 0;
        std::int64_t now_ns = 0;
        for (const std::uint8_t op : ops) {
          if (op == 0 || model.empty()) {
            now_ns += next_ticket % 3;
            const waiter w{next_ticket++, now_ns};
            model.emplace_back(queue.push_back(w), w);
          } else if (op == 1) {
            const waiter w = queue.pop_front();
            RC_ASSERT(w.ticket == model.front().second.ticket);
            model.pop_front();
          } else {
            const std::size_t i = *rc::gen::inRange<std::size_t>(0, model.size());
            RC_ASSERT(queue.at(model[i].first).ticket == model[i].second.ticket);
            queue.remove(model[i].first);
            model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
          }
          RC_ASSERT(queue.size() == static_cast<std::int64_t>(model.size()));
          RC_ASSERT(queue.empty() == model.empty());
          if (!model.empty()) {
            RC_ASSERT(queue.front().ticket == model.front().second.ticket);
            RC_ASSERT(queue.front().deadline_ns == model.front().second.deadline_ns);
          }
        }
        while (!model.empty()) {
          RC_ASSERT(queue.pop_front().ticket == model.front().second.ticket);
          model.pop_front();
        }
        RC_ASSERT(queue.empty());
      },
      metadata, fixed_params());
  require_holds("waiter_queue", result);
}

TEST_CASE("waiter_queue refuses a deadline earlier than the back's", "[fifo][containers]") {
  // Goal: the front-holds-the-earliest-deadline rule is enforced. Method: push a decreasing deadline.
  waiter_queue queue;
  queue.push_back(waiter{1, 10});
  CHECK_THROWS_AS(queue.push_back(waiter{2, 9}), admit::assertion_failure);
  CHECK(queue.size() == 1);
}

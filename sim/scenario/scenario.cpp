#include "sim/scenario/scenario.hpp"

namespace admit::scenario {

std::string to_string(const node_ref& n) {
  switch (n.k) {
    case node_ref::kind::worker:
      return "worker:" + std::to_string(n.worker);
    case node_ref::kind::redis:
      return "redis";
    case node_ref::kind::portal:
      return "portal";
  }
  return "?";
}

std::string generated_request_id(std::size_t generator, std::uint64_t seq) {
  return "arrivals/" + std::to_string(generator) + "/" + std::to_string(seq);
}

}  // namespace admit::scenario

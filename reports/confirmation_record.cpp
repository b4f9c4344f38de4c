#include "reports/confirmation_record.hpp"

#include <sstream>

#include "sim/codec/json_codec.hpp"

namespace admit::reports {

namespace {

using json = nlohmann::ordered_json;
using codec::codec_error;
using codec::read_bool;
using codec::read_field;
using codec::read_string;
using codec::shown;

// The label's opening for each verdict (confirm::label's words).
const char* label_opening(const std::string& verdict) {
  if (verdict == "confirmed") return "confirmed on redis-server ";
  if (verdict == "not_confirmed") return "not confirmed in ";
  if (verdict == "inconclusive") return "confirmation inconclusive";
  return nullptr;
}

}  // namespace

std::string confirmation_record::why() const {
  const auto it = detail.find("why");
  return it != detail.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string confirmation_record::scale_text() const {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o << time_scale;
  return o.str();
}

json confirmation_record::to_json() const {
  json j = json::object();
  j["label"] = label;
  if (interrupted) j["interrupted"] = true;
  j["time_scale"] = time_scale;
  for (const auto& [key, value] : detail.items())
    if (key != "label" && key != "interrupted" && key != "time_scale") j[key] = value;
  return j;
}

confirmation_record confirmation_record::from_json(const json& j, const std::string& path) {
  if (!j.is_object()) throw codec_error(path, "expected an object (a confirmation), got " + shown(j));
  confirmation_record c;
  c.label = read_string(j, path, "label");
  if (j.contains("interrupted")) c.interrupted = read_bool(j, path, "interrupted");
  const json& scale = read_field(j, path, "time_scale");
  if (!scale.is_number() || !(scale.get<double>() >= 0.01 && scale.get<double>() <= 100))
    throw codec_error(path + "/time_scale", "expected a number from 0.01 to 100, got " + shown(scale));
  c.time_scale = scale.get<double>();
  c.verdict = read_string(j, path, "verdict");
  const char* opening = label_opening(c.verdict);
  if (opening == nullptr)
    throw codec_error(path + "/verdict", "expected confirmed, not_confirmed or inconclusive, got " + shown(json(c.verdict)));
  if (c.label.rfind(opening, 0) != 0)
    throw codec_error(path + "/label", "expected the words of a verdict " + c.verdict + " (\"" + opening + "...\"), got " +
                                           shown(json(c.label)));
  (void)read_string(j, path, "why");
  for (const auto& [key, value] : j.items())
    if (key != "label" && key != "interrupted" && key != "time_scale") c.detail[key] = value;
  return c;
}

}  // namespace admit::reports

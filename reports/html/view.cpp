#include "reports/html/view.hpp"

namespace admit::reports::html {

std::string esc(std::string_view s) { return html_escape(s); }

std::string grouped(i64 v) {
  const std::uint64_t mag = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const std::string digits = std::to_string(mag);
  std::string o = v < 0 ? "-" : "";
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) o += ',';
    o += digits[i];
  }
  return o;
}

std::string hundredths(i64 scaled) {
  std::string o = std::to_string(scaled / 100);
  const i64 frac = scaled % 100;
  if (frac != 0) {
    o += '.';
    o += static_cast<char>('0' + frac / 10);
    if (frac % 10 != 0) o += static_cast<char>('0' + frac % 10);
  }
  return o;
}

std::string human_ns(i64 ns) {
  if (ns < 0) return "-" + human_ns(ns == INT64_MIN ? INT64_MAX : -ns);
  struct unit {
    i64 ns;
    const char* name;
  };
  static constexpr unit units[] = {{d_ns, "d"}, {h_ns, "h"}, {min_ns, "min"}, {s_ns, "s"}, {ms_ns, "ms"}, {us_ns, "µs"}};
  for (const unit& u : units) {
    if (ns < u.ns) continue;
    const i128 scaled = (static_cast<i128>(ns) * 100 + u.ns / 2) / u.ns;
    return hundredths(static_cast<i64>(scaled)) + u.name;
  }
  return std::to_string(ns) + "ns";
}

std::string instant_ns(i64 ns) {
  if (ns < min_ns) return human_ns(ns);
  std::string o;
  const i64 d = ns / d_ns, h = ns % d_ns / h_ns, m = ns % h_ns / min_ns, rest = ns % min_ns;
  if (d) o += std::to_string(d) + "d ";
  if (d || h) o += std::to_string(h) + "h ";
  o += std::to_string(m) + "min " + std::to_string(rest / s_ns);
  i64 frac = rest % s_ns / ms_ns;
  if (frac != 0) {
    std::string digits = std::to_string(1000 + frac).substr(1);
    while (digits.back() == '0') digits.pop_back();
    o += "." + digits;
  }
  return o + "s";
}

std::string tick_label(i64 t) {
  if (t == 0) return "0";
  if (t < min_ns) return human_ns(t);
  std::string o;
  const i64 d = t / d_ns, h = t % d_ns / h_ns, m = t % h_ns / min_ns, s = t % min_ns / s_ns;
  if (d) o += std::to_string(d) + "d";
  if (h) o += std::to_string(h) + "h";
  if (m && d == 0) o += std::to_string(m) + "min";
  if (s && d == 0 && h == 0) o += std::to_string(s) + "s";
  return o;
}

i64 round_step(i64 span, i64 want) {
  i64 step = 1;
  for (;;) {
    for (const i64 m : {1, 2, 5}) {
      if (step > INT64_MAX / 10) return step;
      if (span / (step * m) <= want) return step * m;
    }
    step *= 10;
  }
}

time_axis fit_time_axis(i64 span_ns, i64 want) {
  struct unit {
    i64 ns;
    const char* name;
  };
  static constexpr unit units[] = {{d_ns, "d"}, {h_ns, "h"}, {min_ns, "min"}, {s_ns, "s"}, {ms_ns, "ms"}, {us_ns, "µs"}};
  time_axis a;
  for (const unit& u : units)
    if (span_ns >= 2 * u.ns) {
      a.unit_ns = u.ns;
      a.unit = u.name;
      break;
    }
  const i64 tenth = std::max<i64>(a.unit_ns / 10, 1);
  a.step_ns = tenth * round_step(std::max<i64>(span_ns / tenth, 1), want);
  return a;
}

std::string axis_tick(i64 t, const time_axis& a) {
  if (t < 0) return "−" + axis_tick(-t, a);
  if (a.unit_ns < 10) return grouped(t);
  const i64 tenth = a.unit_ns / 10;
  return hundredths((t + tenth / 2) / tenth * 10);
}

std::string short_label(const std::string& s) {
  if (s.size() <= label_chars_max) return s;
  return s.substr(0, label_chars_max - 1) + "…";
}

int panel_of(std::string_view invariant) {
  if (invariant == "gate_inflight_le_cap") return 0;
  if (invariant == "portal_inflight_le_cap") return 1;
  if (invariant == "waiting_le_max") return 2;
  return -1;
}

i64 axis_end_ns(const world::run_record& rec) {
  const auto& tl = rec.series;
  const i64 series_end = static_cast<i64>(tl.buckets().size()) * tl.bucket_width_ns();
  const i64 end = std::max<i64>({rec.metrics.simulated_ns, series_end, 1});
  return end + std::max<i64>(end / 40, 1);
}

const check::violation_window* window_at(const world::invariant_result& inv, i64 at, std::size_t& number) {
  const check::violation_window* found = nullptr;
  for (std::size_t i = 0; i < inv.window_list.size(); ++i) {
    const auto& w = inv.window_list[i];
    if (w.start_ns <= at && at <= w.end_ns) {
      found = &w;
      number = i + 1;
    }
  }
  return found;
}

world::time_span zoom_span(i64 moment, const check::violation_window* w, i64 end_ns) {
  i64 a = moment, b = moment;
  if (w != nullptr) {
    a = w->start_ns;
    b = std::max(w->end_ns, w->start_ns);
  }
  if (b - a > zoom_long_ns) {
    a = std::max(a, moment - zoom_long_ns / 2);
    b = std::min(b, moment + zoom_long_ns / 2);
  }
  const i64 pad = std::max<i64>((b - a) / 3, zoom_pad_ns);
  return world::time_span{std::max<i64>(0, a - pad), std::min(end_ns, b + pad)};
}

std::vector<zoom_view> find_zooms(const world::run_record& rec) {
  std::vector<zoom_view> out;
  const world::invariant_result* first = nullptr;
  for (const auto& inv : rec.invariants)
    if (inv.first && (first == nullptr || inv.first->at_ns < first->first->at_ns)) first = &inv;
  if (first == nullptr) return out;
  const i64 end = axis_end_ns(rec);
  const world::invariant_result* worst = first->worst ? first : nullptr;
  if (worst == nullptr)
    for (const auto& inv : rec.invariants)
      if (inv.worst && (worst == nullptr || inv.worst->value - inv.worst->bound > worst->worst->value - worst->worst->bound))
        worst = &inv;
  zoom_view f;
  f.kind = "first";
  f.inv = first;
  f.moment_ns = first->first->at_ns;
  f.detail = first->first->detail;
  f.window = window_at(*first, f.moment_ns, f.window_number);
  if (f.window != nullptr && f.window->start_ns != f.moment_ns) f.window = nullptr;
  if (worst != nullptr) {
    zoom_view w;
    w.kind = "worst";
    w.inv = worst;
    w.moment_ns = worst->worst->at_ns;
    w.has_value = true;
    w.value = worst->worst->value;
    w.bound = worst->worst->bound;
    w.detail = worst->worst->detail;
    w.window = window_at(*worst, w.moment_ns, w.window_number);
    if (worst == first && (w.moment_ns == f.moment_ns || (w.window != nullptr && w.window == f.window))) {
      w.kind = "first-worst";
      w.span = zoom_span(w.moment_ns, w.window, end);
      out.push_back(std::move(w));
      return out;
    }
    w.span = zoom_span(w.moment_ns, w.window, end);
    out.push_back(std::move(w));
  }
  f.span = zoom_span(f.moment_ns, f.window, end);
  out.push_back(std::move(f));
  return out;
}

bool lanes_cover(const world::run_record& rec, const world::time_span& span) {
  const auto& tl = rec.series;
  if (rec.metrics.requests <= static_cast<std::uint64_t>(tl.lanes().size())) return true;
  if (tl.lanes().size() == world::timeline::max_lanes && tl.lanes().back().arrived_ns > span.to_ns) return true;
  if (tl.span_lanes_dropped()) return false;
  return std::any_of(tl.lane_spans().begin(), tl.lane_spans().end(), [&](const world::time_span& s) {
    return s.from_ns <= span.from_ns && span.to_ns <= s.to_ns;
  });
}

first_violation find_first(const world::run_record& rec) {
  first_violation f;
  for (const auto& inv : rec.invariants) {
    if (!inv.first) continue;
    if (f.inv == nullptr || inv.first->at_ns < f.at_ns) {
      f.inv = &inv;
      f.at_ns = inv.first->at_ns;
    }
  }
  return f;
}

run_view make_view(const scenario::scenario& sc, const world::run_record& rec, bool per_variant) {
  run_view v;
  v.sc = &sc;
  v.rec = &rec;
  v.lease = rec.lease.has_value();
  v.anchor = per_variant ? "run-" + rec.variant : "run";
  v.title = per_variant ? "variant " + rec.variant : sc.name;
  bool all_fifo = !sc.gates.empty();
  i64 waiting = 0;
  for (const auto& g : sc.gates) {
    v.gate_cap += g.cap();
    if (g.kind != scenario::gate_kind::fifo) all_fifo = false;
    else waiting += g.fifo.max_waiting;
  }
  if (all_fifo && !v.lease) {
    v.waiting_cap = waiting;
    v.fifo_gates = sc.gates.size();
    for (const auto& g : sc.gates) v.gate_names += (v.gate_names.empty() ? "" : ", ") + g.name;
  }
  v.portal_cap = sc.service.portal_cap.value_or(v.gate_cap);
  v.end_ns = axis_end_ns(rec);
  v.first = find_first(rec);
  v.zooms = find_zooms(rec);
  return v;
}

const char* fault_colour(const std::string& kind) {
  if (kind == "partition") return "#e07b00";
  if (kind == "crash") return "#7b3fbf";
  if (kind == "pause") return "#4b6584";
  if (kind == "redis_restart") return "#a0522d";
  if (kind == "redis_failover") return "#0f8b8d";
  if (kind == "clock_step") return "#c2185b";
  if (kind == "client_timeout_burst") return "#b8860b";
  return "#6b7280";
}

const char* outcome_colour(const std::string& outcome) {
  if (outcome == "completed") return "#1e7b3c";
  if (outcome == "queue_full" || outcome == "rate_limited") return "#d9480f";
  if (outcome == "wait_timeout" || outcome == "client_timeout") return "#c0262d";
  if (outcome == "internal_error") return "#7f1d1d";
  if (outcome == "crashed") return "#7b3fbf";
  if (outcome == "cancelled") return "#6b7280";
  return "#9ca3af";  // deferred, deferred_unreachable, or anything new
}

std::string clock_note(const scenario::clock_spec& c) {
  std::string s;
  if (c.offset_ns != 0) s = (c.offset_ns > 0 ? "+" : "-") + human_ns(c.offset_ns > 0 ? c.offset_ns : -c.offset_ns);
  if (c.drift_ppm != 0) s += (s.empty() ? "" : " ") + std::to_string(c.drift_ppm) + "ppm";
  return s;
}

}  // namespace admit::reports::html

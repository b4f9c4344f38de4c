// The waiting-time histogram.
#include "reports/html/charts.hpp"

namespace admit::reports::html {

// --- waiting-time histogram ----------------------------------------------------------------------

// The log-linear index of check::histogram (64 sub-buckets per power of two), as an axis position.
i64 log_index(i64 v) {
  if (v < check::histogram::sub_count) return v;
  const auto u = static_cast<std::uint64_t>(v);
  const int msb = 63 - std::countl_zero(u);
  const int shift = msb - check::histogram::sub_bits;
  return static_cast<i64>(shift + 1) * check::histogram::sub_count +
         static_cast<i64>((u >> shift) & (check::histogram::sub_count - 1));
}

void histogram_svg(out& o, const run_view& v) {
  const check::histogram& h = v.rec->metrics.wait_ns;
  const auto buckets = h.nonempty();
  if (buckets.empty()) {
    o << "<p class=\"empty\">No request was granted a lease: no waiting times to show.</p>\n";
    return;
  }
  // Display bins of an eighth of a power of two; zero waits (admitted at once) get their own bar.
  constexpr i64 per_bin = 8;
  std::map<i64, std::pair<std::pair<i64, i64>, std::uint64_t>> bins;  // bin -> ((low, high), count)
  std::uint64_t zero = 0;
  for (const auto& b : buckets) {
    if (b.high == 0) {
      zero += b.count;
      continue;
    }
    const i64 bin = log_index(b.low) / per_bin;
    auto [it, fresh] = bins.try_emplace(bin, std::pair<i64, i64>{b.low, b.high}, 0);
    if (!fresh) it->second.first.second = b.high;
    it->second.second += b.count;
  }
  std::uint64_t count_max = zero;
  for (const auto& [bin, b] : bins) count_max = std::max(count_max, b.second);

  constexpr i64 top = 22, plot_h = 150;
  const i64 height = top + plot_h + 44;
  const i64 zero_x0 = plot_x0, zero_x1 = plot_x0 + 36;
  const i64 log_x0 = zero_x1 + 20;
  i64 lo = 0, hi = 1;
  if (!bins.empty()) {
    lo = bins.begin()->first * per_bin;
    hi = (bins.rbegin()->first + 1) * per_bin;
    // At least a few powers of two wide, so a narrow distribution is not one fat bar.
    const i64 want = 4 * check::histogram::sub_count;
    if (hi - lo < want) {
      const i64 grow = want - (hi - lo);
      lo = std::max<i64>(0, lo - grow / 2);
      hi = lo + want;
    }
  }
  const scale x{lo, hi, T(log_x0), T(plot_x1)};
  const i64 cstep = round_step(static_cast<i64>(count_max), 4);
  const i64 ctop = (static_cast<i64>(count_max) / cstep + 1) * cstep;
  const scale y{0, ctop, T(top + plot_h), T(top)};

  o << "<svg class=\"histogram\" viewBox=\"0 0 " << view_w << ' ' << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"waiting-time histogram\">\n";
  o << "<rect class=\"plot-bg\" x=\"" << zero_x0 << "\" y=\"" << top << "\" width=\"" << zero_x1 - zero_x0
    << "\" height=\"" << plot_h << "\"/><rect class=\"plot-bg\" x=\"" << log_x0 << "\" y=\"" << top << "\" width=\""
    << plot_x1 - log_x0 << "\" height=\"" << plot_h << "\"/>\n";
  for (i64 c = 0; c <= ctop; c += cstep)
    o << "<line class=\"grid\" x1=\"" << zero_x0 << "\" x2=\"" << plot_x1 << "\" y1=\"" << px{y(c)} << "\" y2=\""
      << px{y(c)} << "\"/><text class=\"tick\" x=\"" << plot_x0 - 6 << "\" y=\"" << px{y(c) + 35}
      << "\" text-anchor=\"end\">" << grouped(c) << "</text>\n";
  o << "<text class=\"axis-label\" x=\"" << plot_x0 - 6 << "\" y=\"" << top - 8
    << "\" text-anchor=\"end\">requests</text>\n";
  // Ticks at 1, 2 and 5 times powers of ten within the range; only the powers of ten (then every
  // other one) when that makes too many.
  {
    std::vector<std::pair<i64, bool>> ticks;  // (value, a power of ten)
    for (i64 p = 1; p <= INT64_MAX / 10; p *= 10)
      for (const i64 m : {1, 2, 5}) {
        const i64 pos = log_index(p * m);
        if (pos >= lo && pos <= hi) ticks.emplace_back(p * m, m == 1);
      }
    if (ticks.size() > 12) std::erase_if(ticks, [](const auto& t) { return !t.second; });
    std::size_t stride = 1;
    while (ticks.size() / stride > 12) stride *= 2;
    for (std::size_t i = 0; i < ticks.size(); i += stride) {
      const i64 xt = x(log_index(ticks[i].first));
      o << "<line class=\"grid\" x1=\"" << px{xt} << "\" x2=\"" << px{xt} << "\" y1=\"" << top << "\" y2=\""
        << top + plot_h << "\"/><text class=\"tick\" x=\"" << px{xt} << "\" y=\"" << top + plot_h + 16
        << "\" text-anchor=\"middle\">" << esc(tick_label(ticks[i].first)) << "</text>\n";
    }
  }
  o << "<text class=\"tick\" x=\"" << (zero_x0 + zero_x1) / 2 << "\" y=\"" << top + plot_h + 16
    << "\" text-anchor=\"middle\">0</text>";
  o << "<text class=\"axis-label\" x=\"" << plot_x1 << "\" y=\"" << height - 4
    << "\" text-anchor=\"end\">waiting time, arrival to lease (log scale)</text>\n";
  if (zero > 0)
    o << "<rect class=\"hist-bar zero\" x=\"" << zero_x0 + 6 << "\" y=\"" << px{y(static_cast<i64>(zero))}
      << "\" width=\"" << zero_x1 - zero_x0 - 12 << "\" height=\"" << px{T(top + plot_h) - y(static_cast<i64>(zero))}
      << "\"><title>" << grouped(static_cast<i64>(zero)) << " admitted at once (0 ns)</title></rect>\n";
  for (const auto& [bin, b] : bins) {
    const i64 x0 = x(bin * per_bin), x1 = x((bin + 1) * per_bin);
    const i64 c = static_cast<i64>(b.second);
    o << "<rect class=\"hist-bar\" x=\"" << px{x0} << "\" y=\"" << px{y(c)} << "\" width=\""
      << px{std::max<i64>(x1 - x0 - 4, 4)} << "\" height=\"" << px{T(top + plot_h) - y(c)} << "\"><title>"
      << esc(human_ns(b.first.first)) << " – " << esc(human_ns(b.first.second)) << ": " << grouped(c)
      << "</title></rect>\n";
  }
  // Percentiles as the JSON report gives them, labels staggered so that close ones stay readable.
  struct mark {
    const char* name;
    i64 value;
  };
  const mark marks[] = {{"p50", h.percentile(500)}, {"p90", h.percentile(900)}, {"p99", h.percentile(990)},
                        {"max", h.max()}};
  i64 last_x = -T(1000);
  int level = 0;
  for (const mark& m : marks) {
    if (m.value == 0) continue;
    const i64 xm = x(log_index(m.value) + 1);
    level = xm - last_x > T(95) ? 0 : level + 1;
    last_x = xm;
    const bool right = xm > T(plot_x1 - 90);
    o << "<g class=\"percentile\"><title>" << m.name << " " << esc(human_ns(m.value)) << "</title><line x1=\""
      << px{xm} << "\" x2=\"" << px{xm} << "\" y1=\"" << top << "\" y2=\"" << top + plot_h << "\"/><text x=\""
      << px{xm + (right ? -T(3) : T(3))} << "\" y=\"" << top + 11 + 13 * level << "\""
      << (right ? " text-anchor=\"end\"" : "") << ">" << m.name << ' ' << esc(human_ns(m.value)) << "</text></g>\n";
  }
  o << "</svg>\n";
}

}  // namespace admit::reports::html

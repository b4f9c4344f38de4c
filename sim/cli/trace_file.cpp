#include "sim/cli/trace_file.hpp"

#include <charconv>
#include <utility>

#include "gate/admit_assert.hpp"
#include "sim/cli/errors.hpp"

namespace admit::cli {

using namespace std::string_view_literals;

namespace {

template <class Int>
void append_int(std::string& out, Int v) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, static_cast<std::size_t>(r.ptr - digits));
}

// Printable ASCII that JSON takes as it is.
bool plain(unsigned char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

// The length of the UTF-8 sequence at the start of `s`, or 0 when it is not
// one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
std::size_t utf8_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (plain(c)) {  // a run of plain bytes, appended at once: most texts are nothing else
      std::size_t end = i + 1;
      while (end < s.size() && plain(static_cast<unsigned char>(s[end]))) ++end;
      out.append(s.data() + i, end - i);
      i = end;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c == '\t') {
      out += "\\t";
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 0xF];
      ++i;
    } else if (const std::size_t n = utf8_length(s.substr(i)); n > 0) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out += "\\ufffd";  // one replacement per byte that starts no sequence
      ++i;
    }
  }
  out += '"';
}

void check_trace_path(const std::string& path, const std::vector<other_path>& others) {
  if (const auto why = check_output(path)) throw input_error{path, *why};
  for (const other_path& o : others) {
    if (o.input && o.path == "-") continue;
    if (same_output(path, o.path))
      throw input_error{"--trace and " + o.what, "expected two files, got the same one: " + path};
  }
}

void open_trace(trace_file& trace, const std::string& path, trace_header header) {
  if (const auto why = trace.open(path, std::move(header))) throw input_error{path, *why};
}

void flush_trace(trace_file& trace, const std::string& path) {
  if (!trace.flush()) throw input_error{path, *trace.failed()};
}

void commit_trace(trace_file& trace, const std::string& path) {
  if (const auto why = trace.commit()) throw input_error{path, *why};
}

std::optional<std::string> trace_file::open(const std::string& path, trace_header header) {
  header_ = std::move(header);
  buf_.reserve(trace_buffer_bytes + 1024);
  return out_.open(path, "trace");
}

void trace_file::begin_run(std::string_view run) {
  ADMIT_ASSERT(!in_run_, "a run begins after the one before has ended");
  in_run_ = true;
  entries_ = 0;
  if (failed()) return;
  try {
    run_prefix_ = "{\"run\":"sv;
    append_json_string(run_prefix_, run);
    run_prefix_ += ',';
    buf_ += run_prefix_;
    buf_ += "\"begin\":{\"format\":\""sv;
    buf_ += trace_format;
    buf_ += "\",\"scenario\":"sv;
    append_json_string(buf_, header_.scenario);
    buf_ += ",\"file\":"sv;
    append_json_string(buf_, header_.file);
    buf_ += ",\"seed\":"sv;
    append_int(buf_, header_.seed);
    if (header_.order) {
      buf_ += ",\"order\":"sv;
      append_json_string(buf_, *header_.order);
    }
    buf_ += "}}\n"sv;
  } catch (...) {  // only bad_alloc
    lost("out of memory while writing a line");
    return;
  }
  line_done();
}

void trace_file::entry(const check::trace_line& e) noexcept {
  ADMIT_ASSERT(in_run_, "an entry belongs to a run");
  ++entries_;
  if (failed()) return;
  try {
    buf_ += run_prefix_;
    buf_ += "\"at_ns\":"sv;
    append_int(buf_, e.at_ns);
    buf_ += ",\"source\":"sv;
    append_json_string(buf_, e.source);
    buf_ += ",\"what\":"sv;
    append_json_string(buf_, e.what);
    buf_ += ",\"active\":"sv;
    append_int(buf_, e.active);
    buf_ += ",\"waiting\":"sv;
    append_int(buf_, e.waiting);
    buf_ += ",\"ref\":"sv;
    append_int(buf_, e.ref);
    buf_ += "}\n"sv;
  } catch (...) {  // only bad_alloc
    lost("out of memory while writing a line");
    return;
  }
  line_done();
}

void trace_file::end_run() {
  ADMIT_ASSERT(in_run_, "a run ends once it has begun");
  in_run_ = false;
  if (failed()) return;
  try {
    buf_ += run_prefix_;
    buf_ += "\"end\":{\"entries\":"sv;
    append_int(buf_, entries_);
    buf_ += "}}\n"sv;
  } catch (...) {  // only bad_alloc
    lost("out of memory while writing a line");
    return;
  }
  line_done();
}

void trace_file::lost(std::string_view why) noexcept {
  out_.fail(why);
  buf_.clear();
}

void trace_file::line_done() noexcept {
  if (bytes() > bytes_max_) [[unlikely]] {
    // Made on the stack, as nothing here may throw: the words and at most 20 digits.
    char why[96];
    const std::string_view head = "it would pass the limit of ";
    std::size_t n = head.copy(why, head.size());
    n = static_cast<std::size_t>(std::to_chars(why + n, why + sizeof why, bytes_max_).ptr - why);
    const std::string_view tail = " bytes for a trace";
    n += tail.copy(why + n, sizeof why - n);
    lost(std::string_view(why, n));
    return;
  }
  if (buf_.size() >= trace_buffer_bytes) flush();
}

bool trace_file::flush() noexcept {
  if (failed()) return false;
  written_ += buf_.size();
  const bool ok = out_.write(buf_);
  buf_.clear();
  return ok;
}

std::optional<std::string> trace_file::commit() {
  ADMIT_ASSERT(!in_run_, "the file is put in place once its last run has ended");
  flush();
  return out_.commit();
}

}  // namespace admit::cli

// junit: test results as JUnit XML, the file CI systems (GitLab, Jenkins,
// GitHub's test reporters) read and show test by test.
//
// The shape is the common subset those readers agree on:
//
//   <?xml version="1.0" encoding="UTF-8"?>
//   <testsuites name=".." tests="N" failures="F" errors="E" skipped="S">
//     <testsuite name=".." tests=".." failures=".." errors=".." skipped="..">
//       <testcase classname=".." name="..">
//         <failure message="..">text</failure>      (or <error>, or <skipped/>)
//         <system-out>text</system-out>              (optional)
//       </testcase>
//     </testsuite>
//   </testsuites>
//
// No `time` or `timestamp` attribute: the same results give the same bytes.
// Text is escaped for XML 1.0: & < > " ' as entities, and the characters XML
// 1.0 cannot hold at all (control characters other than tab, newline and
// carriage return; bytes that are not UTF-8) as the text "\xNN", so any
// detail string gives a well-formed file.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace admit::reports {

struct junit_case {
  enum class outcome { passed, failure, error, skipped };
  std::string classname;
  std::string name;
  outcome result = outcome::passed;
  std::string message;  // the failure's, error's or skip's one line (an attribute)
  std::string text;     // its longer text (the element's content)
  std::optional<std::string> system_out;
};

struct junit_suite {
  std::string name;
  std::vector<junit_case> cases;
};

// The whole document, one <testsuites> named `name` holding `suites` in order.
std::string render_junit(const std::string& name, const std::vector<junit_suite>& suites);

// `s` escaped for an XML attribute value or text (as above).
std::string xml_escape(const std::string& s);

}  // namespace admit::reports

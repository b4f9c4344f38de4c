// write_file: the CLI's names for reports/output_file.hpp, how every verb
// writes a file (the rules are there).
#pragma once

#include "reports/output_file.hpp"

namespace admit::cli {

using reports::check_output;
using reports::dir_lock;
using reports::output_stream;
using reports::prepare_output_dir;
using reports::same_output;
using reports::write_output;

}  // namespace admit::cli

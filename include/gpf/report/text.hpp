#pragma once
// The text report laid out for its reader: width, colour, verbosity, punctuation.
#include "gpf/report/report.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gpf {

struct TextOptions {
  bool color = false;
  std::size_t width = 80; // columns to wrap to (at least 40 is used)
  bool verbose = false;   // every info finding in full, even on a pass
  bool utf8 = true;       // false: ASCII punctuation ("-" for the dash, "..." for the ellipsis)
};

// Lines wrapped to the width with hanging indents; on a pass the info findings folded into one
// line unless verbose; a closing line with the verdict and the export.
std::string render_text(const Report& report, const TextOptions& options);

// text wrapped at spaces to `width` columns, ending in a newline: the first line continues after
// `used` columns, the next ones start with `hang` spaces; a word longer than a line is cut.
std::string wrap_text(std::string_view text, std::size_t used, std::size_t hang, std::size_t width);

// Our own punctuation in ASCII, for a terminal whose locale is not UTF-8: the dashes, the
// ellipsis, the quotes and the arrow.
std::string ascii_punctuation(std::string s);

// The driver's version line (/proc/driver/nvidia/version) in a few words, for text only:
// "550.54.14 (open kernel module)", from what the driver probe read from the line; nullopt when
// the line gave no version.
std::optional<std::string> short_driver_banner(const DriverFacts& driver);

} // namespace gpf

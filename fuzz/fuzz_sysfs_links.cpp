// libFuzzer target: the sysfs attributes of links (PCIe link width/speed, AER statistics,
// InfiniBand port state/rate). Property: no crash; a parsed value is within its documented range.
#include "fuzz_support.hpp"

#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/tenths.hpp"

GPF_FUZZ_TARGET(sysfs_links) {
  const auto text = gpf::fuzz::as_text(data, size);
  if (const auto w = gpf::parse_link_width(text)) {
    gpf::fuzz::require(*w <= 32, "a link width is at most 32 lanes");
  }
  if (const auto s = gpf::parse_link_speed(text)) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(gpf::tenths_text(*s)), "speed text is UTF-8");
  }
  for (const char* total : {"TOTAL_ERR_COR", "TOTAL_ERR_FATAL", "TOTAL_ERR_NONFATAL"}) {
    (void)gpf::parse_aer_total(text, total);
  }
  return 0;
}

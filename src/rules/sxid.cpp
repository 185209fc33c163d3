// Rules whose id starts with "sxid.": a site's row for one NVSwitch SXid (`sxid.22003`), judged as
// the nvswitch.sxid-* rows judge it. No built-in rows.
#include "gpf/rules/sxid.hpp"
#include "common.hpp"

namespace gpf {

void add_sxid_code_rule(std::vector<Rule>& rules, std::string_view id, unsigned sxid) {
  // The rows that judge this SXid, whichever word its line has.
  const auto judges = judges_of(builtin_rules(), code_samples(LogEventKind::sxid, sxid));
  const SxidInfo* info = find_sxid(sxid);
  Rule row;
  row.id = id;
  row.stage = Stage::host;
  row.severity = info && info->cls != SxidClass::fatal ? Severity::warn : Severity::fail;
  row.severity_from = "as the built-in nvswitch.sxid-* row that judges the event (site policy per "
                      "SXid)";
  row.title = "No NVSwitch SXid of one code since boot (site policy per SXid)";
  row.remedy = "Follow the finding";
  row.source = info ? info->source : k_sxid_catalog_url;
  row.explanation = "A site policy row for one SXid: its events are judged here instead of by "
                    "nvswitch.sxid-fatal / nvswitch.sxid-nonfatal.";
  add_code_rule(
      rules, std::move(row), judges,
      [sxid](const LogEvent& e) { return e.kind == LogEventKind::sxid && e.sxid == sxid; },
      [](const LogEvent&) { return false; });
}

} // namespace gpf

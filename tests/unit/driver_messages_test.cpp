// The driver-message catalog (include/gpf/knowledge/driver_messages.hpp) against the list
// extracted from its tag (tests/data/driver-messages/<tag>.txt,
// scripts/extract-driver-messages.py): a new driver's new messages show up here as a difference,
// and every row's judgement agrees with what the kernel-log scanner makes of an example line built
// from the row's format.
#include "gpf/facts/log_names.hpp"
#include "gpf/knowledge/driver_messages.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

using namespace gpf;

namespace {

std::string list_text() {
  const std::string path =
      fmt::format("{}/tests/data/driver-messages/{}.txt", GPF_SOURCE_DIR, k_driver_messages_tag);
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value a header line "# key: value" gives, "" when there is none.
std::string header(const std::string& text, const std::string& key) {
  std::smatch m;
  const std::regex line("^# " + key + ": (.*)$", std::regex::multiline);
  return std::regex_search(text, m, line) ? m[1].str() : "";
}

// Example lines for the formats whose arguments the driver constrains: the version banner the
// scanner reads, a BAR the driver calls invalid only when its size or its address is 0.
const std::map<std::string_view, std::vector<std::string>> k_examples{
    {"NVRM: loading %s",
     {"NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.45.04  Release Build  "
      "(dvs-builder@U22-I3-AE18-23-3)  Thu Jan  1 00:00:00 UTC 2026"}},
    {"NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\nNVRM: BAR%d is "
     "%lluM @ 0x%llx (PCI:%04x:%02x:%02x.%x)",
     {"NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
      "NVRM: BAR1 is 16384M @ 0x0 (PCI:0000:3b:00.0)"}},
};

// The lines the kernel would show for a format: conversions filled with plausible values (a PCI
// address where the driver prints one), "%%" printed as '%', one line per newline.
std::vector<std::string> example_lines(std::string_view format) {
  if (const auto it = k_examples.find(format); it != k_examples.end()) {
    return it->second;
  }
  std::string text(format);
  const auto replace_all = [&](std::string_view from, std::string_view to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  replace_all("%04x:%02x:%02x.%x", "0000:3b:00.0");
  replace_all("%04x:%02x:%02x", "0000:3b:00");
  static const std::regex conversion(
      R"(%[-+ #0]*[0-9*]*(\.[0-9*]+)?(hh|h|ll|l|z|j|t)?([a-zA-Z%]))");
  std::string filled;
  auto begin = std::sregex_iterator(text.begin(), text.end(), conversion);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    filled.append(text, last, static_cast<std::size_t>(it->position()) - last);
    const char c = it->str(3)[0];
    filled += c == '%' ? "%" : c == 's' ? "RmInitAdapter" : c == 'p' ? "00000000deadbeef" : "1";
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  filled.append(text, last);
  std::vector<std::string> lines;
  for (std::size_t at = 0;;) {
    const std::size_t nl = filled.find('\n', at);
    lines.push_back(filled.substr(at, nl == std::string::npos ? nl : nl - at));
    if (nl == std::string::npos) {
      break;
    }
    at = nl + 1;
  }
  return lines;
}

// What the scanner recognises in the example lines of a row: "driver-load", the event kinds'
// names, or nothing.
std::vector<std::string> recognised(const DriverMessage& row) {
  std::string log;
  for (const auto& line : example_lines(row.format)) {
    log += fmt::format("[   12.345678] {}\n", line);
  }
  const LogFacts facts = scan_kernel_log(log);
  std::vector<std::string> out;
  if (facts.driver_load) {
    out.emplace_back("driver-load");
  }
  for (const auto& e : facts.host_events) {
    out.emplace_back(log_event_kind_name(e.kind));
  }
  for (const auto& [bus, events] : facts.gpu_events) {
    for (const auto& e : events) {
      out.emplace_back(log_event_kind_name(e.kind));
    }
  }
  return out;
}

} // namespace

TEST_CASE("driver messages: the table holds exactly the list extracted at its tag") {
  const std::string text = list_text();
  CHECK(header(text, "tag") == k_driver_messages_tag);
  CHECK(header(text, "source") == k_driver_messages_url);
  CHECK(header(text, "messages") == std::to_string(driver_message_table().size()));
  const MessageListDiff diff = compare_driver_messages(text);
  for (const auto& line : diff.not_in_table) {
    UNSCOPED_INFO("extracted at the tag but not in the table (scripts/extract-driver-messages.py "
                  "--table rewrites the rows): "
                  << line);
  }
  for (const auto& line : diff.not_in_list) {
    UNSCOPED_INFO("in the table but not extracted at the tag: " << line);
  }
  CHECK(diff.not_in_table.empty());
  CHECK(diff.not_in_list.empty());
  CHECK(driver_message_table().size() > 800);
}

TEST_CASE("driver messages: a planted new message and a dropped one are named") {
  const std::string planted =
      "nvidia\terror\tyes\tkernel-open/nvidia/nv.c\tNVRM: GPU %04x:%02x:%02x.%x: a new failure";
  std::string text = list_text() + planted + "\n";
  const std::string dropped = driver_message_line(driver_message_table()[7]);
  const std::size_t at = text.find(dropped + "\n");
  REQUIRE(at != std::string::npos);
  text.erase(at, dropped.size() + 1);
  const MessageListDiff diff = compare_driver_messages(text);
  CHECK(diff.not_in_table == std::vector<std::string>{planted});
  CHECK(diff.not_in_list == std::vector<std::string>{dropped});
}

TEST_CASE("driver messages: a row's line is the list's, escapes as in the source") {
  const DriverMessage row{"nvidia",
                          PrintLevel::warning,
                          false,
                          "kernel-open/nvidia/nv.c",
                          "NVRM: a\tb \"c\" \\d\nNVRM: e",
                          MessageFamily::notice};
  CHECK(driver_message_line(row) ==
        "nvidia\twarning\tno\tkernel-open/nvidia/nv.c\tNVRM: a\\tb \\\"c\\\" \\\\d\\nNVRM: e");
}

TEST_CASE("driver messages: families in enum order, every row judged") {
  const auto families = message_family_table();
  for (std::size_t i = 0; i < families.size(); ++i) {
    CHECK(static_cast<std::size_t>(families[i].family) == i);
    CHECK(families[i].event_kind.empty() == (families[i].judgement != MessageJudgement::evidence));
    CHECK_FALSE(families[i].meaning.empty());
  }
  std::vector<std::string> unjudged;
  for (const DriverMessage& row : driver_message_table()) {
    if (message_family(row.family).judgement == MessageJudgement::unjudged) {
      unjudged.push_back(driver_message_line(row));
    }
  }
  for (const auto& line : unjudged) {
    UNSCOPED_INFO(
        "not yet judged (give it a family in src/knowledge/driver_messages.inc): " << line);
  }
  CHECK(unjudged.empty());
}

TEST_CASE("driver messages: example lines") {
  CHECK(example_lines("NVRM: GPU %04x:%02x:%02x.%x: RmInitAdapter failed! (0x%x:0x%x:%d)") ==
        std::vector<std::string>{"NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x1:0x1:1)"});
  CHECK(example_lines("NVRM: BAR%d is %%lluM\nNVRM: %s: %5.2f%%") ==
        std::vector<std::string>{"NVRM: BAR1 is %lluM", "NVRM: RmInitAdapter: 1%"});
}

// Every way: a row judged evidence of a kind is recognised as that kind; a failure the driver logs
// is a driver-failure event (unless its format has too little fixed text to be told apart, which
// few have); any other row is recognised as nothing (else the scanner already judges it and the
// row must say so, or a failure's shape is loose enough to take a benign line).
TEST_CASE("driver messages: each row's judgement is what the scanner makes of its line") {
  std::size_t evidence = 0;
  std::size_t failures = 0;
  std::size_t failures_seen = 0;
  for (const DriverMessage& row : driver_message_table()) {
    const MessageFamilyInfo& family = message_family(row.family);
    const std::vector<std::string> got = recognised(row);
    INFO(driver_message_line(row));
    if (family.judgement == MessageJudgement::evidence) {
      ++evidence;
      CHECK(got == std::vector<std::string>{std::string(family.event_kind)});
    } else if (family.judgement == MessageJudgement::failure && row.logged &&
               row.format.starts_with("NVRM:")) {
      ++failures;
      if (!got.empty()) {
        ++failures_seen;
        CHECK(got == std::vector<std::string>{"driver-failure"});
      }
    } else {
      CHECK(got.empty());
    }
  }
  CHECK(evidence >= 10);
  CHECK(failures >= 130);
  CHECK(failures_seen + 10 >= failures);
}

TEST_CASE("driver messages: a failure's shape is anchored, whole and specific") {
  const auto* msix = match_failure_message("GPU 0000:2a:00.0: Failed to allocate MSI-X entries.");
  REQUIRE(msix);
  CHECK(msix->family == MessageFamily::interrupts);
  CHECK(msix->file == "kernel-open/nvidia/nv-msi.c");
  const auto* dma = match_failure_message("nv_dma_map_pages: Failed to create a DMA mapping!");
  REQUIRE(dma);
  CHECK(dma->family == MessageFamily::dma_mapping);
  CHECK_FALSE(failure_remedy(dma->family).empty());
  // text before the format's first literal, or after its last, is another message
  CHECK_FALSE(match_failure_message("note: nv_dma_map_pages: Failed to create a DMA mapping! ok"));
  CHECK_FALSE(
      match_failure_message("GPU 0000:2a:00.0: Failed to allocate MSI-X entries. (forged)"));
  CHECK_FALSE(match_failure_message("this text is in no catalogue and says nothing"));
  CHECK_FALSE(match_failure_message(""));
}

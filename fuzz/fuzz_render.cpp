// libFuzzer target: the renderers fed with facts built from fuzz strings. The input is cut into
// the files of a snapshot (strings ended by a backslash and another byte, as FuzzedDataProvider
// cuts them: kernel release, modules, driver files, two GPUs' information, environ, dmesg.txt,
// cuda.json, devices.json, ...); the whole check runs on it (probes, built-in rules, verdict) and
// every renderer prints the result. Properties: no crash; the JSON report parses back and, like
// text, env and line output, is valid UTF-8; the one-line form stays within its documented width.
#include "fuzz_support.hpp"

#include "gpf/probes/pipeline.hpp"
#include "gpf/report/report.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/verdict.hpp"

#include <array>
#include <fstream>

namespace {
namespace fs = std::filesystem;

// The order is the seed format (fuzz/make_seeds.py writes the fixture files in this order).
constexpr std::array<const char*, 17> k_files = {
    "proc/sys/kernel/osrelease",
    "proc/modules",
    "proc/driver/nvidia/version",
    "proc/driver/nvidia/params",
    "proc/driver/nvidia/registry",
    "proc/driver/nvidia/gpus/0000:01:00.0/information",
    "proc/driver/nvidia/gpus/0000:02:00.0/information",
    "sys/module/nvidia/version",
    "environ",
    "dmesg.txt",
    "cuda.json",
    "devices.json",
    "statvfs.json",
    "proc/cmdline",
    "proc/mounts",
    "dev/nvidiactl",
    "dev/nvidia0",
};

void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}
} // namespace

GPF_FUZZ_TARGET(render) {
  const auto& root = gpf::fuzz::scratch_root();
  auto rest = gpf::fuzz::as_text(data, size);
  for (const char* name : k_files) {
    // An empty string means "absent": missing inputs are half of what the checker must handle.
    const auto content = gpf::fuzz::take_string(rest);
    std::error_code ec;
    fs::remove(root / name, ec);
    if (!content.empty()) {
      write_file(root / name, content);
    }
  }
  auto host = gpf::Host::snapshot(root);
  gpf::fuzz::require(host.ok(), "the scratch root opens");
  gpf::ProbeOptions options;
  options.cuda_timeout_s = 1;
  const auto facts = gpf::collect_facts(*host, options);
  const auto assessment = gpf::assess(facts, gpf::builtin_rules(), gpf::CheckOptions{});
  const gpf::Report report{facts, assessment, gpf::exit_code_for(assessment.verdict, false),
                           gpf::RunInfo{}};

  const auto json = gpf::render_json(report);
  gpf::fuzz::require(gpf::fuzz::is_valid_utf8(json), "JSON is valid UTF-8");
  gpf::fuzz::require(!nlohmann::json::parse(json, nullptr, false).is_discarded(), "JSON parses");
  gpf::fuzz::require(gpf::fuzz::is_valid_utf8(gpf::render_text(report, false)),
                     "text is valid UTF-8");
  gpf::fuzz::require(gpf::fuzz::is_valid_utf8(gpf::render_text(report, true)),
                     "color text is valid UTF-8");
  gpf::fuzz::require(gpf::fuzz::is_valid_utf8(gpf::render_env(report)), "env is valid UTF-8");
  const auto line = gpf::render_line(report);
  gpf::fuzz::require(gpf::fuzz::is_valid_utf8(line), "line is valid UTF-8");
  gpf::fuzz::require(line.size() <= gpf::k_line_max_bytes + 1, "line within its width");
  return 0;
}

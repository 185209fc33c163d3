// The JSON report stands alone: the node it is about (host), when it was checked (checked_at)
// and the options that changed its verdict (options).
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>

using namespace gpf::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json check_json(const std::vector<std::string>& args) {
  std::vector<std::string> all{"check", "--format", "json"};
  all.insert(all.end(), args.begin(), args.end());
  const auto r = run_preflight(all);
  REQUIRE(r.exit_code <= 1);
  return json::parse(r.out);
}

// A copy of a fixture, to add or change a file in it.
void copy_fixture(const std::string& name, const fs::path& to) {
  fs::copy(fixture(name), to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
}

std::time_t parse_rfc3339(const std::string& s) {
  std::tm tm{};
  REQUIRE(::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr);
  return ::timegm(&tm);
}

} // namespace

TEST_CASE("report: host is the snapshot's recorded name, null when it records none") {
  const json plain = check_json({"--root", fixture("healthy-4gpu")});
  CHECK(plain.at("host").is_null()); // never the checking machine's name

  TempDir t;
  copy_fixture("healthy-4gpu", t.path / "snap");
  std::ofstream(t.path / "snap/proc/sys/kernel/hostname") << "gpu-node-017\n";
  CHECK(check_json({"--root", (t.path / "snap").string()}).at("host") == "gpu-node-017");
}

TEST_CASE("report: checked_at is RFC 3339 UTC and the time of the check") {
  const auto before = std::time(nullptr);
  const json doc = check_json({"--root", fixture("healthy-4gpu")});
  const auto after = std::time(nullptr);
  const std::string at = doc.at("checked_at");
  CHECK(std::regex_match(at, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
  const auto t = parse_rfc3339(at);
  CHECK(t >= before);
  CHECK(t <= after);
}

TEST_CASE("report: options records what changed the verdict") {
  const json plain = check_json({"--root", fixture("excluded-gpu")});
  CHECK(plain.at("options") == json{{"min_gpus", 1},
                                    {"strict", false},
                                    {"expect_cuda", nullptr},
                                    {"disabled_rules", json::array()}});
  const json tuned =
      check_json({"--root", fixture("excluded-gpu"), "--min-gpus", "3", "--strict", "--expect-cuda",
                  "12.4", "--disable", "gpu.excluded", "--disable", "kernel.below-5.5-multi-gpu"});
  CHECK(tuned.at("options") ==
        json{{"min_gpus", 3},
             {"strict", true},
             {"expect_cuda", "12.4"},
             {"disabled_rules", {"gpu.excluded", "kernel.below-5.5-multi-gpu"}}});

  // Given on both sides of the check command's name, both count.
  const auto r =
      run_preflight({"--disable", "gpu.excluded", "--severity", "driver.libraries-not-checked=fail",
                     "check", "--format", "json", "--root", fixture("excluded-gpu"), "--disable",
                     "kernel.below-5.5-multi-gpu", "--severity", "cuda.no-expected-version=warn"});
  CHECK(r.exit_code == 1);
  const json split = json::parse(r.out);
  CHECK(split.at("options").at("disabled_rules") ==
        json{"gpu.excluded", "kernel.below-5.5-multi-gpu"});
  std::map<std::string, std::string> severity;
  for (const auto& f : split.at("findings")) {
    severity[f.at("id").get<std::string>()] = f.at("severity").get<std::string>();
  }
  CHECK(severity.count("gpu.excluded") == 0);
  CHECK(severity["driver.libraries-not-checked"] == "fail");
  CHECK(severity["cuda.no-expected-version"] == "warn");
}

TEST_CASE("report: a snapshot records the node's name and the replay reports it") {
  TempDir t;
  copy_fixture("healthy-4gpu", t.path / "src");
  std::ofstream(t.path / "src/proc/sys/kernel/hostname") << "rack3-node12\n";
  const auto dir = (t.path / "snap").string();
  REQUIRE(run_preflight({"snapshot", "--no-cuda", "--root", (t.path / "src").string(), "-o", dir})
              .exit_code == 0);
  CHECK(fs::exists(fs::path(dir) / "proc/sys/kernel/hostname"));
  CHECK(check_json({"--root", dir}).at("host") == "rack3-node12");

  // the live host: snapshot writes uname's node name, which the replay then reports
  const auto live_dir = (t.path / "live").string();
  const auto live = run_preflight({"snapshot", "--no-cuda", "--no-nvml", "-o", live_dir});
  REQUIRE(live.exit_code == 0);
  char name[256] = {};
  REQUIRE(::gethostname(name, sizeof name - 1) == 0);
  std::ifstream in(fs::path(live_dir) / "proc/sys/kernel/hostname");
  std::string recorded;
  std::getline(in, recorded);
  CHECK(recorded == name);
}

// GPF_UPDATE_GOLDENS=1 rewrites the example from the real output (after an intended change).
TEST_CASE("docs/json-output.md: the example is the real output, member for member") {
  std::ifstream in(std::string(GPF_SOURCE_DIR) + "/docs/json-output.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto start = doc.find("```json\n");
  REQUIRE(start != std::string::npos);
  const auto end = doc.find("```", start + 8);
  const json example = json::parse(doc.substr(start + 8, end - start - 8));
  const json real =
      check_json({"--root", std::string(GPF_SOURCE_DIR) + "/docs/examples/broken-node"});
  REQUIRE(example.size() >= 10); // abridged by leaving members out, never by changing one
  if (std::getenv("GPF_UPDATE_GOLDENS") != nullptr) {
    // the same members, in the example's order, with today's values
    const nlohmann::ordered_json in_order =
        nlohmann::ordered_json::parse(doc.substr(start + 8, end - start - 8));
    const auto again = run_preflight({"check", "--format", "json", "--root",
                                      std::string(GPF_SOURCE_DIR) + "/docs/examples/broken-node"});
    const auto real_in_order = nlohmann::ordered_json::parse(again.out); // the report's key order
    nlohmann::ordered_json fresh;
    for (const auto& [key, value] : in_order.items()) {
      fresh[key] = real_in_order.at(key);
    }
    std::ofstream(std::string(GPF_SOURCE_DIR) + "/docs/json-output.md")
        << doc.substr(0, start + 8) << fresh.dump(2) << "\n"
        << doc.substr(end);
    return;
  }
  for (const auto& [key, value] : example.items()) {
    INFO(key);
    REQUIRE(real.contains(key));
    if (key == "checked_at") {
      CHECK(std::regex_match(value.get<std::string>(),
                             std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
    } else {
      CHECK(value == real.at(key));
    }
  }
}

// `explain` says more than the finding: every rule has an explanation of its own (not its title),
// the ones written for the driver, device-node, GPU, Xid and CUDA rules say how to confirm by hand
// with a command and what the finding does to the verdict; a GPU row names each cause once; a
// remedy names this host's values.
#include "gpf/report/rules_doc.hpp"
#include "gpf/rules/rule.hpp"

#include "support/checked.hpp"
#include "support/run.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

using namespace gpf;
using namespace gpf::test;

namespace {

// Runs of spaces and newlines as one space: explain wraps its fields.
std::string collapsed(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!out.empty() && out.back() != ' ')) {
      out += space ? ' ' : c;
    }
  }
  return out;
}

} // namespace

TEST_CASE("no rule's explanation is empty or repeats its title") {
  for (const auto& r : builtin_rules()) {
    INFO(r.id);
    CHECK_FALSE(r.explanation.empty());
    CHECK(r.explanation != r.title);
    CHECK(r.explanation.size() > r.title.size());
  }
}

TEST_CASE("the common rules' explanations say how to confirm by hand and what they do") {
  std::size_t covered = 0;
  for (const auto& r : builtin_rules()) {
    const std::string_view id = r.id;
    const bool common = id.rfind("driver.", 0) == 0 || id.rfind("devnode.", 0) == 0 ||
                        id.rfind("xid.", 0) == 0 || id.rfind("cuda.", 0) == 0 ||
                        id.rfind("gpu.", 0) == 0;
    const std::string_view e = r.explanation;
    if (!common || e.find("Confirm") == std::string_view::npos) {
      continue;
    }
    INFO(r.id);
    ++covered;
    // a concrete command, quoted as code
    CHECK(std::count(e.begin(), e.end(), '`') >= 2);
    // what it does to the verdict or the recommendation
    const bool effect = e.find("verdict") != std::string_view::npos ||
                        e.find("recommend") != std::string_view::npos ||
                        e.find("--strict") != std::string_view::npos;
    CHECK(effect);
    // explain shows it
    const std::string shown = render_explain(r);
    CHECK(collapsed(shown).find(collapsed(e)) != std::string::npos);
    for (std::size_t start = 0, nl = shown.find('\n'); nl != std::string::npos;
         start = nl + 1, nl = shown.find('\n', start)) {
      // wrapped for a terminal (these texts are ASCII); a source URL is never cut
      CHECK((nl - start <= 80 || shown.compare(start, 8, "Sources:") == 0));
    }
    // a `command` that fits a line stays on one, to be copied whole
    for (auto open = e.find('`'); open != std::string_view::npos;) {
      const auto close = e.find('`', open + 1);
      if (close == std::string_view::npos) {
        break;
      }
      const std::string_view command = e.substr(open, close + 1 - open);
      INFO(command);
      if (command.size() <= 60) {
        CHECK(shown.find(command) != std::string::npos);
      }
      open = e.find('`', close + 1);
    }
  }
  CHECK(covered >= 40);
}

TEST_CASE("a GPU row names each cause once") {
  for (const auto& name : fixture_names()) {
    INFO(name);
    const auto c = check_fixture(name);
    for (const auto& g : c.assessment.gpus) {
      const std::set<std::string> unique(g.reasons.begin(), g.reasons.end());
      CHECK(unique.size() == g.reasons.size());
    }
  }
}

TEST_CASE("remedies carry this host's values, not placeholders") {
  const auto remedy_of = [](const std::string& fixture_name, const std::string& id) {
    const auto r = run_preflight({"--root", fixture(fixture_name), "--format", "json"});
    const auto report = nlohmann::json::parse(r.out);
    for (const auto& f : report.at("findings")) {
      if (f.at("id") == id) {
        return f.at("remedy").get<std::string>();
      }
    }
    return std::string("(no finding)");
  };
  CHECK_THAT(remedy_of("compat-cuda121-driver470", "cuda.driver-too-old"),
             Catch::Contains("at least 525.60.13"));
  CHECK_THAT(remedy_of("cuda-replay-gpu-hung", "cuda.gpu-hung"),
             Catch::Contains("`nvidia-smi -r -i 0000:02:00.0`"));
  CHECK_THAT(remedy_of("topo-nvswitch-no-fm", "nvswitch.fabric-manager-missing"),
             Catch::Contains("nvidia-fabricmanager-550"));
  // the channel device's major as the snapshot's proc/devices gives it
  CHECK_THAT(remedy_of("imex-gb200-no-channel", "imex.channel-missing"),
             Catch::Contains("mknod /dev/nvidia-caps-imex-channels/channel0 c 234 0"));
  // a remedy fits its error: a damaged file is not "run as root"
  CHECK_THAT(remedy_of("garbage-files", "probe.failed"), !Catch::Contains("root"));
  for (const auto& name : fixture_names()) {
    INFO(name);
    const auto r = run_preflight({"--root", fixture(name), "--format", "json"});
    for (const char* placeholder : {"<bus id>", "<version>", "<branch>", "<major>"}) {
      CHECK(r.out.find(placeholder) == std::string::npos);
    }
  }
}

// Site policy per Xid and SXid (xid.N, sxid.N, xid.N.count) and docs/user-rules.md's examples,
// run as written: every JSON block and every gpu-preflight command line of the page.
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/rules/user_rules.hpp"
#include "gpf/rules/verdict.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace gpf;

namespace {

const char* const k_gpus[] = {"0000:18:00.0", "0000:2a:00.0"};

// Two GPUs whose current boot's kernel log holds these messages.
Facts host_with_log(const std::vector<std::string>& messages) {
  Facts f;
  f.driver.loaded = true;
  f.driver.version = Version::parse("550.54.14");
  f.driver.version_text = "550.54.14";
  for (const char* bus : k_gpus) {
    GpuFacts g;
    g.bus_id = bus;
    f.gpus.push_back(g);
  }
  std::string log;
  double t = 100;
  for (const auto& m : messages) {
    log += fmt::format("[{:12.6f}] {}\n", t, m);
    t += 1.5;
  }
  f.log = scan_kernel_log(log);
  f.log.source = "dmesg.txt";
  return f;
}

std::string xid_line(const char* bus, unsigned xid, std::string_view text = "text") {
  // "0000:2a:00.0" -> "0000:2a:00" as Xid lines print it
  return fmt::format("NVRM: Xid (PCI:{}): {}, pid=7, name=python, {}",
                     std::string(bus).substr(0, 10), xid, text);
}

RuleOverrides disabling(std::string id) {
  RuleOverrides o;
  o.disable.push_back(std::move(id));
  return o;
}

RuleOverrides leveling(std::string arg) {
  RuleOverrides o;
  o.severity.push_back(std::move(arg));
  return o;
}

Result<RuleSet> build(RuleOverrides o, std::optional<std::string> text = std::nullopt) {
  if (text) {
    o.rules_file = "site.json";
  }
  return RuleSet::build(builtin_rules(), o,
                        text ? std::optional<std::string_view>(*text) : std::nullopt);
}

RuleSet built(RuleOverrides o, std::optional<std::string> text = std::nullopt) {
  auto set = build(std::move(o), std::move(text));
  if (!set) {
    FAIL(set.error().message);
  }
  return std::move(set).value();
}

// The assessment by the set's log and site rows only (xid.*, sxid.*, nvswitch.sxid-*, site.*):
// the other built-in rows would judge this bare host's missing files.
Assessment judge(const Facts& f, const RuleSet& set) {
  std::vector<Rule> rows;
  for (const auto& r : set.rules()) {
    for (std::string_view prefix : {"xid.", "sxid.", "nvswitch.sxid-", "site."}) {
      if (r.id.substr(0, prefix.size()) == prefix) {
        rows.push_back(r);
      }
    }
  }
  return assess(f, rows, {});
}

std::vector<Finding> findings(const Assessment& a, std::string_view id) {
  std::vector<Finding> out;
  std::copy_if(a.findings.begin(), a.findings.end(), std::back_inserter(out),
               [&](const Finding& x) { return x.id == id; });
  return out;
}

bool usable(const Assessment& a, std::string_view bus) {
  const auto it = std::find_if(a.gpus.begin(), a.gpus.end(),
                               [&](const GpuAssessment& g) { return g.bus_id == bus; });
  REQUIRE(it != a.gpus.end());
  return it->usable;
}

std::string read_doc() {
  std::ifstream in(std::string(GPF_SOURCE_DIR) + "/docs/user-rules.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fenced blocks of one language in a markdown text.
std::vector<std::string> blocks(const std::string& md, const std::string& lang) {
  std::vector<std::string> out;
  const std::string open = "```" + lang + "\n";
  for (auto at = md.find(open); at != std::string::npos; at = md.find(open, at)) {
    at += open.size();
    const auto end = md.find("```", at);
    REQUIRE(end != std::string::npos);
    out.push_back(md.substr(at, end - at));
    at = end + 3;
  }
  return out;
}

} // namespace

TEST_CASE("docs/user-rules.md: every JSON example and every command line builds as written") {
  const std::string md = read_doc();
  const auto json = blocks(md, "json");
  REQUIRE(json.size() >= 3);
  for (const auto& text : json) {
    INFO(text);
    CHECK(build({}, text));
  }
  unsigned commands = 0;
  for (const auto& sh : blocks(md, "sh")) {
    std::istringstream lines(sh);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("gpu-preflight ", 0) != 0) {
        continue;
      }
      INFO(line);
      ++commands;
      std::istringstream words(line.substr(0, line.find('#')));
      std::vector<std::string> args;
      for (std::string w; words >> w;) {
        args.push_back(w);
      }
      RuleOverrides o;
      bool with_file = false;
      for (std::size_t i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == "--disable") {
          o.disable.push_back(args[++i]);
        } else if (args[i] == "--severity") {
          o.severity.push_back(args[++i]);
        } else if (args[i] == "--rules") {
          with_file = true; // the page's first example file stands for it
          ++i;
        }
      }
      const auto set = build(o, with_file ? std::optional(json.front()) : std::nullopt);
      CHECK(set);
      if (set && line.find("explain ") != std::string::npos) {
        CHECK(set.value().find(args.back()));
      }
    }
  }
  CHECK(commands >= 4);
}

TEST_CASE("docs/user-rules.md: the xid.13 row re-levels Xid 13 alone") {
  const std::string md = read_doc();
  const std::string row = R"({"id": "xid.13", "severity": "warn"})";
  REQUIRE(md.find(row) != std::string::npos);
  const auto set = built({}, fmt::format(R"({{"schema": 1, "rules": [{}]}})", row));
  const auto a = judge(host_with_log({xid_line(k_gpus[1], 13), xid_line(k_gpus[1], 31)}), set);
  const auto x13 = findings(a, "xid.13");
  REQUIRE(x13.size() == 1);
  CHECK(x13[0].severity == Severity::warn);
  CHECK(x13[0].message.find("Xid 13") != std::string::npos);
  // Xid 31 is still the application row's, and Xid 13 no longer is
  const auto app = findings(a, "xid.application");
  REQUIRE(app.size() == 1);
  CHECK(app[0].message.find("Xid 31") != std::string::npos);
  CHECK(app[0].message.find("Xid 13") == std::string::npos);
  CHECK(usable(a, k_gpus[1]));
}

TEST_CASE("docs/user-rules.md: Xid 13 ten times on one GPU drops that GPU (xid.13.count)") {
  const auto json = blocks(read_doc(), "json");
  const auto example = std::find_if(json.begin(), json.end(), [](const std::string& t) {
    return t.find("xid.13.count") != std::string::npos;
  });
  REQUIRE(example != json.end());
  const auto set = built({}, *example);
  std::vector<std::string> log;
  for (int i = 0; i < 10; ++i) {
    log.push_back(xid_line(k_gpus[1], 13));
  }
  log.push_back(xid_line(k_gpus[0], 13));
  const auto a = judge(host_with_log(log), set);
  const auto repeated = findings(a, "site.xid13-repeated");
  REQUIRE(repeated.size() == 1);
  CHECK(repeated[0].severity == Severity::fail);
  CHECK(repeated[0].gpu == std::string(k_gpus[1]));
  REQUIRE_FALSE(repeated[0].evidence.empty());
  CHECK(repeated[0].evidence[0].find("Xid 13 on 0000:2a:00.0: 10 times") != std::string::npos);
  CHECK_FALSE(usable(a, k_gpus[1]));
  CHECK(usable(a, k_gpus[0]));
  CHECK(findings(a, "xid.13").size() == 2); // one warning per GPU
}

TEST_CASE("per-code ids: --disable xid.45, --severity xid.48=warn keeps the GPU, sxid.22003") {
  {
    const auto set = built(disabling("xid.45"));
    const auto a = judge(host_with_log({xid_line(k_gpus[0], 45), xid_line(k_gpus[0], 13)}), set);
    CHECK(findings(a, "xid.45").empty());
    const auto app = findings(a, "xid.application");
    REQUIRE(app.size() == 1);
    CHECK(app[0].message.find("Xid 45") == std::string::npos);
  }
  {
    const auto f = host_with_log({xid_line(k_gpus[0], 48, "DBE (0x1)")});
    const auto plain = judge(f, built({}));
    CHECK_FALSE(usable(plain, k_gpus[0]));
    const auto set = built(leveling("xid.48=warn"));
    const auto a = judge(f, set);
    const auto x48 = findings(a, "xid.48");
    REQUIRE(x48.size() == 1);
    CHECK(x48[0].severity == Severity::warn);
    CHECK(findings(a, "xid.reset-required").empty());
    CHECK(usable(a, k_gpus[0]));
  }
  {
    const auto set = built(leveling("sxid.22003=warn"));
    const auto a = judge(
        host_with_log({"nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 22003, Fatal, Link 12 halt"}),
        set);
    CHECK(findings(a, "nvswitch.sxid-fatal").empty());
    const auto s = findings(a, "sxid.22003");
    REQUIRE(s.size() == 1);
    CHECK(s[0].severity == Severity::warn);
  }
  {
    const auto bad = build(disabling("xid.79"));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("gpu.fallen-off-bus") != std::string::npos);
    CHECK_FALSE(build(disabling("xid.013"))); // not a code id: no such rule
  }
}

TEST_CASE("xid.N.count is unknown without a kernel log: at most a warning") {
  const auto set = built({}, R"({"schema": 1, "rules": [{"id": "site.x31", "severity": "fail",
      "check": {"fact": "xid.31.count", "max": 2}, "remedy": "Drain it"}]})");
  Facts f = host_with_log({});
  f.log.ran = false;
  const auto a = judge(f, set);
  const auto hits = findings(a, "site.x31");
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].severity == Severity::warn);
  CHECK(hits[0].message.find("could not be confirmed") != std::string::npos);
  CHECK(usable(a, k_gpus[0]));
}

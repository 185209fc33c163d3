// User rules (--rules FILE, --disable, --severity): site policy in the facts' vocabulary, added to
// the built-in table or overriding rows by id. The schema is documented in docs/user-rules.md.
// Everything wrong with a rules file is an Error naming the file, the position and the problem.
#include "gpf/rules/user_rules.hpp"
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/rules/sxid.hpp"
#include "gpf/rules/xid.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/plural.hpp"

#include "gpf/util/tenths.hpp"
#include "gpf/util/text.hpp"
#include "gpf/util/text_pattern.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

namespace gpf {
namespace {

using Json = nlohmann::json;

constexpr std::size_t k_max_rules_file = 1 << 20;

enum class FactKind { version, number, text, set };

struct FactSpec {
  std::string_view name;
  FactKind kind;
  Stage stage;
};

constexpr std::string_view k_active_at = "ib.ports.active_at.";

// The vocabulary: the facts a user rule may test (docs/user-rules.md lists them).
constexpr FactSpec k_facts[] = {
    {"driver.version", FactKind::version, Stage::host},
    {"driver.branch", FactKind::number, Stage::host},
    {"driver.flavour", FactKind::text, Stage::host},
    {"kernel.version", FactKind::version, Stage::host},
    {"kernel.release", FactKind::text, Stage::host},
    {"cuda.expected", FactKind::version, Stage::host},
    {"cuda.driver_version", FactKind::version, Stage::host},
    {"gpus.total", FactKind::number, Stage::host},
    {"gpus.usable", FactKind::number, Stage::summary},
    {"gpu.model", FactKind::text, Stage::gpu},
    {"modules.loaded", FactKind::set, Stage::host},
};

// "xid.13.count": the Xid whose count per GPU the fact is; nullopt for another name.
std::optional<unsigned> xid_count_code(std::string_view name) {
  if (!starts_with(name, "xid.") || name.size() < 11 || name.substr(name.size() - 6) != ".count") {
    return std::nullopt;
  }
  const auto digits = name.substr(4, name.size() - 10);
  if (digits.size() > 4 || digits[0] == '0' ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return static_cast<unsigned>(std::stoul(std::string(digits)));
}

std::optional<FactSpec> fact_spec(std::string_view name) {
  for (const auto& f : k_facts) {
    if (f.name == name) {
      return f;
    }
  }
  if (starts_with(name, "env.") && name.size() > 4) {
    return FactSpec{name, FactKind::text, Stage::host};
  }
  if (xid_count_code(name)) {
    return FactSpec{name, FactKind::number, Stage::gpu};
  }
  if (name == "ib.ports.active" ||
      (starts_with(name, k_active_at) && parse_tenths(name.substr(k_active_at.size())))) {
    return FactSpec{name, FactKind::number, Stage::host};
  }
  return std::nullopt;
}

// A parsed "check": one fact and the constraints it must satisfy.
struct UserCheck {
  std::string fact;
  FactKind kind = FactKind::text;
  std::optional<Version> min;
  std::optional<Version> max;
  std::optional<std::string> equals;
  std::vector<std::string> one_of;
  std::optional<TextPattern> matches;
  std::string matches_text;
  std::vector<std::string> contains;
  std::vector<std::string> excludes;
  std::optional<bool> present;
  std::string description; // "driver.version >= 535"
};

// The value of a fact on this host, with verbatim evidence.
struct FactValue {
  std::optional<Version> version;
  std::string shown; // the version as printed by its source ("470.82.01", not "470.82.1")
  std::optional<std::string> text;
  const std::set<std::string>* set = nullptr;
  std::string evidence;
  bool known() const { return version || text || set; }
};

Version count(std::size_t n) {
  return Version({static_cast<unsigned long>(n)});
}

// ib.ports.active / ib.ports.active_at.<Gb/s>: the ports that are ACTIVE with LinkUp (at least at
// that rate). A down port's rate is stale, so only active ports count. No sys/class/infiniband: 0.
void ib_ports_fact(const Facts& f, const std::string& name, FactValue& v) {
  const auto& rdma = f.topology.rdma;
  const auto* probe = f.probe("rdma");
  if (!rdma.ran && !(probe && probe->state == ProbeState::skipped)) {
    return; // not read or unreadable: unknown
  }
  // 0: no rate asked (the fact's name has none); else tenths of Gb/s
  const unsigned min_rate = starts_with(name, k_active_at)
                                ? parse_tenths(name.substr(k_active_at.size())).value_or(0)
                                : 0;
  std::size_t n = 0;
  std::vector<std::string> listed;
  std::size_t others = 0;
  for (const auto& d : rdma.devices) {
    for (const auto& p : d.ports) {
      if (!p.active()) {
        ++others;
        continue;
      }
      if (min_rate > 0 && p.rate.value_or(0) < min_rate) {
        listed.push_back(fmt::format("{}/{} {} (below)", d.name, p.port, p.rate_text));
        continue;
      }
      ++n;
      listed.push_back(fmt::format("{}/{} {}", d.name, p.port, p.rate_text));
    }
  }
  v.version = count(n);
  if (!rdma.ran) {
    v.evidence = "sys/class/infiniband does not exist: no RDMA ports";
    return;
  }
  if (listed.size() > 8) {
    const auto more = listed.size() - 8;
    listed.resize(8);
    listed.push_back(fmt::format("... {} more", more));
  }
  v.evidence = fmt::format("active ports{}: {}{}",
                           min_rate > 0 ? fmt::format(" at {} Gb/s or more", tenths_text(min_rate))
                                        : std::string(),
                           n, listed.empty() ? "" : fmt::format(" ({})", fmt::join(listed, ", ")));
  if (others > 0) {
    v.evidence += fmt::format("; {} not active", counted(others, "port"));
  }
}

// xid.N.count for one GPU: how often the current boot's kernel log has Xid N on it; unknown
// without a kernel log.
FactValue xid_count_fact(const Facts& f, unsigned xid, const std::string& bus) {
  FactValue v;
  if (!f.log.ran || !f.log.read_error.empty()) {
    v.evidence = "kernel log: not read";
    return v;
  }
  std::uint64_t n = 0;
  std::string first;
  std::string last;
  if (auto it = f.log.gpu_events.find(bus); it != f.log.gpu_events.end()) {
    for (const auto& e : it->second) {
      if (e.kind == LogEventKind::xid && e.xid == xid) {
        n += e.count;
        first = first.empty() ? e.first_time : first;
        last = e.count > 1 ? e.last_time : e.first_time;
      }
    }
  }
  v.version = Version({static_cast<unsigned long>(n)});
  v.evidence =
      fmt::format("kernel log ({}): Xid {} on {}: {} in the current boot{}", f.log.source, xid, bus,
                  counted(n, "time"),
                  first.empty() ? "" : fmt::format(", first at [{}], last at [{}]", first, last));
  return v;
}

FactValue host_fact(const UserCheck& check, const RuleContext& c) {
  const Facts& f = c.facts;
  FactValue v;
  const std::string& name = check.fact;
  if (name == "driver.version" || name == "driver.branch") {
    if (f.driver.version) {
      v.version =
          name == "driver.version" ? *f.driver.version : Version({f.driver.version->major()});
      v.shown = name == "driver.version" && !f.driver.version_text.empty() ? f.driver.version_text
                                                                           : v.version->str();
      v.evidence = f.driver.version_line.empty()
                       ? "driver version " + f.driver.version_text
                       : "/proc/driver/nvidia/version: " + f.driver.version_line;
    }
  } else if (name == "driver.flavour") {
    if (f.driver.flavour != DriverFlavour::unknown) {
      v.text = f.driver.flavour == DriverFlavour::open ? "open" : "proprietary";
      v.evidence = "/proc/driver/nvidia/version: " + f.driver.version_line;
    }
  } else if (name == "kernel.version" || name == "kernel.release") {
    if (name == "kernel.version" ? f.kernel.version.has_value() : !f.kernel.release.empty()) {
      if (name == "kernel.version") {
        v.version = f.kernel.version;
      } else {
        v.text = f.kernel.release;
      }
      v.evidence = "uname -r: " + f.kernel.release;
    }
  } else if (name == "cuda.expected") {
    if (const auto& e = f.compat.expected_cuda) {
      v.version = e->version;
      v.shown = e->text;
      v.evidence = fmt::format("expected CUDA {} ({})", e->text, e->source);
    }
  } else if (name == "cuda.driver_version") {
    if (f.cuda.ran && f.cuda.driver_version) {
      v.version = Version::from_cuda_number(*f.cuda.driver_version);
      v.evidence = fmt::format("cuDriverGetVersion: {}", *f.cuda.driver_version);
    }
  } else if (name == "gpus.total") {
    v.version = count(f.gpus.size());
    v.evidence = fmt::format("GPUs listed by the driver: {}", f.gpus.size());
  } else if (name == "gpus.usable") {
    v.version = count(c.recommended.size());
    v.evidence = fmt::format(
        "usable and recommended GPUs: {}{}", c.recommended.size(),
        c.recommended.empty() ? "" : fmt::format(" ({})", fmt::join(c.recommended, ", ")));
  } else if (name == "modules.loaded") {
    v.set = &f.modules.loaded;
    v.evidence = "/proc/modules";
  } else if (starts_with(name, "ib.ports.")) {
    ib_ports_fact(f, name, v);
  } else if (starts_with(name, "env.")) {
    const std::string var = name.substr(4);
    if (auto value = f.env.get(var)) {
      v.text = *value;
      v.evidence = var + "=" + *value;
    } else {
      v.evidence = var + " is not set";
    }
  }
  return v;
}

// Empty when the value satisfies the check; otherwise what is wrong.
std::string violation(const UserCheck& check, const FactValue& v) {
  if (check.present) {
    if (*check.present != v.known()) {
      return *check.present ? "it is unknown / not set" : "it is set";
    }
    if (!v.known()) {
      return {};
    }
  }
  if (v.version) {
    const std::string shown = v.shown.empty() ? v.version->str() : v.shown;
    if (check.min && *v.version < *check.min) {
      return fmt::format("{} is below {}", shown, check.min->str());
    }
    if (check.max && *v.version > *check.max) {
      return fmt::format("{} is above {}", shown, check.max->str());
    }
    if (check.equals &&
        !(Version::parse(*check.equals) && *v.version == *Version::parse(*check.equals))) {
      return fmt::format("{} is not {}", shown, *check.equals);
    }
  }
  if (v.text) {
    if (check.equals && *v.text != *check.equals) {
      return fmt::format("\"{}\" is not \"{}\"", *v.text, *check.equals);
    }
    if (!check.one_of.empty() &&
        std::find(check.one_of.begin(), check.one_of.end(), *v.text) == check.one_of.end()) {
      return fmt::format("\"{}\" is not one of {}", *v.text, fmt::join(check.one_of, ", "));
    }
    if (check.matches && !check.matches->found_in(*v.text)) {
      if (v.text->size() > TextPattern::k_max_value) {
        return fmt::format("the value ({} bytes) is longer than {} bytes, which `matches` never "
                           "matches",
                           v.text->size(), TextPattern::k_max_value);
      }
      return fmt::format("\"{}\" does not match \"{}\"", quote_evidence(*v.text),
                         check.matches_text);
    }
  }
  if (v.set) {
    for (const auto& m : check.contains) {
      if (v.set->count(m) == 0) {
        return fmt::format("{} is not loaded", m);
      }
    }
    for (const auto& m : check.excludes) {
      if (v.set->count(m) != 0) {
        return fmt::format("{} is loaded", m);
      }
    }
  }
  return {};
}

Severity at_most_warn(Severity s) {
  return s == Severity::fail ? Severity::warn : s;
}

CheckFn make_check(std::shared_ptr<const UserCheck> check, std::string id, Severity severity) {
  return [check, id, severity](const RuleContext& c) -> std::vector<Hit> {
    std::vector<Hit> hits;
    // One GPU's fact: unknown is at most a warning (why, in `unknown`); a violation drops the GPU
    // when the row fails.
    const auto judge_gpu = [&](const GpuFacts& gpu, const FactValue& v,
                               const std::string& unknown) {
      if (!v.known() && !check->present) {
        Hit h{unknown, {v.evidence}, gpu.bus_id};
        h.severity = at_most_warn(severity);
        hits.push_back(std::move(h));
      } else if (auto why = violation(*check, v); !why.empty()) {
        hits.push_back({fmt::format("Site rule {}: {} fails {}: {}", id, c.job.label(gpu.bus_id),
                                    check->description, why),
                        {v.evidence},
                        gpu.bus_id,
                        severity == Severity::fail ? Effect::gpu_unusable : Effect::none});
      }
    };
    if (const auto xid = xid_count_code(check->fact)) {
      for (const auto& gpu : c.facts.gpus) {
        judge_gpu(gpu, xid_count_fact(c.facts, *xid, gpu.bus_id),
                  fmt::format("Site rule {}: the kernel log was not read, so {} could not be "
                              "confirmed for {}",
                              id, check->description, c.job.label(gpu.bus_id)));
      }
      return hits;
    }
    if (check->fact == "gpu.model") {
      for (const auto& gpu : c.facts.gpus) {
        FactValue v;
        if (gpu.model) {
          v.text = *gpu.model;
        }
        v.evidence = fmt::format("/proc/driver/nvidia/gpus/{}/information: Model: {}", gpu.bus_id,
                                 gpu.model.value_or("(none)"));
        judge_gpu(gpu, v,
                  fmt::format("Site rule {}: {} has no model name, so {} could not be confirmed",
                              id, c.job.label(gpu.bus_id), check->description));
      }
      return hits;
    }
    const FactValue v = host_fact(*check, c);
    if (!v.known() && !check->present) {
      Hit h{fmt::format("Site rule {}: {} is unknown, so {} could not be confirmed", id,
                        check->fact, check->description),
            {v.evidence.empty() ? check->fact + ": unknown" : v.evidence}};
      h.severity = at_most_warn(severity);
      hits.push_back(std::move(h));
    } else if (auto why = violation(*check, v); !why.empty()) {
      hits.push_back(
          {fmt::format("Site rule {}: {} fails {}: {}", id, check->fact, check->description, why),
           {v.evidence}});
    }
    return hits;
  };
}

// ---- reading the file
// ----------------------------------------------------------------------------

Error at(const std::string& file, const std::string& pointer, const std::string& what) {
  return Error{to_valid_utf8(fmt::format("{}: {}: {}", file, pointer, what))};
}

// Two or more '.'-separated words of [a-z0-9], each '-' between two such characters.
bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > 128) {
    return false;
  }
  std::size_t dots = 0;
  char prev = '.';
  for (const char c : id) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (c != '.' && c != '-')) {
      return false;
    }
    if (!alnum && (prev == '.' || prev == '-')) {
      return false; // an empty word, or '-' not between two characters
    }
    dots += c == '.' ? 1 : 0;
    prev = c;
  }
  return dots > 0 && prev != '.' && prev != '-';
}

std::string short_json(const Json& j) {
  return quote_evidence(j.dump(-1, ' ', false, Json::error_handler_t::replace), 60);
}

struct Reader {
  const std::string& file;

  Result<std::string> text(const Json& v, const std::string& ptr) const {
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
      return at(file, ptr, fmt::format("must be a non-empty string, not {}", short_json(v)));
    }
    return v.get<std::string>();
  }
  Result<Severity> severity(const Json& v, const std::string& ptr) const {
    TRY_ASSIGN(auto t, text(v, ptr));
    if (auto s = parse_severity(t)) {
      return *s;
    }
    return at(file, ptr,
              fmt::format("\"{}\" is not one of info, warn, fail", quote_evidence(t, 40)));
  }
  Result<std::vector<std::string>> texts(const Json& v, const std::string& ptr) const {
    std::vector<std::string> out;
    if (v.is_string()) {
      out.push_back(v.get<std::string>());
      return out;
    }
    if (!v.is_array() || v.empty()) {
      return at(file, ptr, "must be a string or a non-empty array of strings");
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      TRY_ASSIGN(auto t, text(v[i], fmt::format("{}/{}", ptr, i)));
      out.push_back(t);
    }
    return out;
  }
  Result<Version> version(const Json& v, const std::string& ptr) const {
    std::string t;
    if (v.is_number_unsigned()) {
      t = std::to_string(v.get<unsigned long>());
    } else if (v.is_string()) {
      t = v.get<std::string>();
    }
    const auto parsed = Version::parse_exact(t);
    if (!parsed) {
      return at(file, ptr, fmt::format("{} is not a version or a number", short_json(v)));
    }
    return *parsed;
  }

  Result<std::shared_ptr<const UserCheck>> check(const Json& v, const std::string& ptr) const {
    if (!v.is_object()) {
      return at(file, ptr,
                "must be an object such as {\"fact\": \"driver.version\", \"min\": \"535\"}");
    }
    auto c = std::make_shared<UserCheck>();
    auto fact = v.find("fact");
    if (fact == v.end()) {
      return at(file, ptr, "missing \"fact\"");
    }
    TRY_ASSIGN(auto name, text(*fact, ptr + "/fact"));
    const auto spec = fact_spec(name);
    if (!spec) {
      return at(
          file, ptr + "/fact",
          fmt::format("unknown fact \"{}\" (see docs/user-rules.md)", quote_evidence(name, 60)));
    }
    c->fact = name;
    c->kind = spec->kind;
    std::vector<std::string> parts;
    for (const auto& [key, value] : v.items()) {
      const std::string p = ptr + "/" + key;
      const bool ordered = c->kind == FactKind::version || c->kind == FactKind::number;
      if (key == "fact") {
        continue;
      }
      if (key == "present") {
        if (!value.is_boolean()) {
          return at(file, p, "must be true or false");
        }
        c->present = value.get<bool>();
        parts.push_back(*c->present ? "is known" : "is not set");
      } else if ((key == "min" || key == "max") && ordered) {
        TRY_ASSIGN(auto ver, version(value, p));
        (key == "min" ? c->min : c->max) = ver;
        parts.push_back(fmt::format("{} {}", key == "min" ? ">=" : "<=", ver.str()));
      } else if (key == "equals" && c->kind != FactKind::set) {
        if (ordered) {
          TRY_ASSIGN(auto ver, version(value, p));
          c->equals = ver.str();
        } else {
          TRY_ASSIGN(auto t, text(value, p));
          c->equals = t;
        }
        parts.push_back("== " + *c->equals);
      } else if (key == "one_of" && c->kind == FactKind::text) {
        TRY_ASSIGN(auto list, texts(value, p));
        c->one_of = list;
        parts.push_back(fmt::format("in [{}]", fmt::join(c->one_of, ", ")));
      } else if (key == "matches" && c->kind == FactKind::text) {
        TRY_ASSIGN(auto t, text(value, p));
        auto pattern = TextPattern::parse(t);
        if (!pattern) {
          return at(
              file, p,
              fmt::format("not a valid pattern (docs/user-rules.md): {}", pattern.error().message));
        }
        c->matches = *pattern;
        c->matches_text = t;
        parts.push_back(fmt::format("matches \"{}\"", t));
      } else if ((key == "contains" || key == "excludes") && c->kind == FactKind::set) {
        TRY_ASSIGN(auto list, texts(value, p));
        (key == "contains" ? c->contains : c->excludes) = list;
        parts.push_back(fmt::format("{} {}", key, fmt::join(list, ", ")));
      } else {
        return at(file, p,
                  fmt::format("\"{}\" cannot be used with fact {} (see docs/user-rules.md)", key,
                              c->fact));
      }
    }
    if (parts.empty()) {
      return at(
          file, ptr,
          "needs a condition (min, max, equals, one_of, matches, contains, excludes or present)");
    }
    c->description = fmt::format("{} {}", c->fact, fmt::join(parts, " and "));
    return std::shared_ptr<const UserCheck>(std::move(c));
  }
};

// line:column (1-based, as editors count) of the byte-th byte (1-based, nlohmann's
// parse_error::byte).
std::string line_column(std::string_view text, std::size_t byte) {
  const auto upto = text.substr(0, std::min(byte, text.size()));
  const auto line = 1 + std::count(upto.begin(), upto.end(), '\n');
  const auto last_nl = upto.rfind('\n');
  const auto column = last_nl == std::string_view::npos ? upto.size() : upto.size() - last_nl - 1;
  return fmt::format("{}:{}", line, std::max<std::size_t>(column, 1));
}

// "xid.13" / "sxid.22003": a site's id for one code (digits without a leading zero).
struct CodeId {
  bool sxid = false;
  unsigned code = 0;
};

std::optional<CodeId> code_id(std::string_view id) {
  CodeId out;
  if (starts_with(id, "xid.")) {
    id.remove_prefix(4);
  } else if (starts_with(id, "sxid.")) {
    id.remove_prefix(5);
    out.sxid = true;
  } else {
    return std::nullopt;
  }
  if (id.empty() || id.size() > 5 || id[0] == '0' ||
      id.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  out.code = static_cast<unsigned>(std::stoul(std::string(id)));
  return out;
}

} // namespace

std::string_view RuleSet::keep(std::string text) {
  m_text.push_back(std::make_unique<std::string>(std::move(text)));
  return *m_text.back();
}

const Rule* RuleSet::find(std::string_view id) const {
  for (const auto& r : m_rules) {
    if (r.id == id) {
      return &r;
    }
  }
  return nullptr;
}

Result<void> RuleSet::add_code_rules(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    const auto code = code_id(id);
    if (!code || find(id)) {
      continue;
    }
    const std::string_view kept = keep(id);
    if (code->sxid) {
      add_sxid_code_rule(m_rules, kept, code->code);
      const SxidInfo* info = find_sxid(code->code);
      m_rules.back().title =
          keep(fmt::format("No NVSwitch SXid {}{} since boot (site policy per SXid)", code->code,
                           info ? fmt::format(" ({})", info->name) : std::string()));
    } else if (add_xid_code_rule(m_rules, kept, code->code)) {
      const XidInfo* info = find_xid(code->code);
      m_rules.back().title =
          keep(fmt::format("No Xid {}{} in the current boot (site policy per Xid)", code->code,
                           info ? fmt::format(" ({})", info->mnemonic) : std::string()));
    } else {
      return Error{to_valid_utf8(
          fmt::format("\"{}\": Xid {} is judged by {}, which reads more than the kernel "
                      "log; name that rule instead",
                      id, code->code, xid_rule_id(code->code)))};
    }
    m_code_rules.insert(std::string(kept));
  }
  return {};
}

Result<RuleSet> RuleSet::build(std::span<const Rule> builtin, const RuleOverrides& overrides,
                               std::optional<std::string_view> rules_text) {
  RuleSet set;
  set.m_rules.assign(builtin.begin(), builtin.end());
  // Ids named for one code (xid.13, sxid.22003) get their rows before anything refers to them.
  std::vector<std::string> named(overrides.disable.begin(), overrides.disable.end());
  for (const auto& arg : overrides.severity) {
    named.push_back(arg.substr(0, arg.rfind('=')));
  }
  std::vector<std::pair<std::string, std::string>> disables;              // id, where it was asked
  std::vector<std::tuple<std::string, Severity, std::string>> severities; // id, level, where

  if (rules_text) {
    const std::string file = overrides.rules_file.value_or("rules file");
    if (!json_depth_within(*rules_text)) {
      return Error{fmt::format("{}: nested deeper than {} levels", file, k_json_max_depth)};
    }
    Json doc;
    try {
      doc = Json::parse(*rules_text);
    } catch (const Json::parse_error& e) {
      std::string what = e.what();
      if (auto col = what.find("column "); col != std::string::npos) {
        if (auto colon = what.find(": ", col); colon != std::string::npos) {
          what = what.substr(colon + 2);
        }
      }
      return Error{
          to_valid_utf8(fmt::format("{}:{}: {}", file, line_column(*rules_text, e.byte), what))};
    } catch (const Json::exception& e) {
      // a well-formed number too large for a double (1E400): nlohmann's out_of_range, no position
      std::string what = e.what();
      if (auto end = what.find("] "); end != std::string::npos) {
        what = what.substr(end + 2);
      }
      return Error{to_valid_utf8(fmt::format("{}: {}", file, what))};
    }
    if (!doc.is_object()) {
      return at(file, "/", "the rules file must be a JSON object with a \"rules\" array");
    }
    const Reader reader{file};
    for (const auto& [key, value] : doc.items()) {
      if (key != "schema" && key != "description" && key != "rules" && key != "disable" &&
          key != "severity") {
        return at(file, "/" + key,
                  "unknown member (expected schema, description, rules, disable, severity)");
      }
    }
    if (auto schema = doc.find("schema");
        schema != doc.end() && (!schema->is_number_unsigned() || schema->get<unsigned>() != 1)) {
      return at(file, "/schema", "must be 1");
    }
    for (const char* member : {"rules", "disable"}) {
      if (auto list = doc.find(member); list != doc.end()) {
        for (const auto& item : list->is_array() ? *list : Json::array({*list})) {
          if (item.is_string()) {
            named.push_back(item.get<std::string>());
          } else if (item.is_object() && item.contains("id") && item["id"].is_string()) {
            named.push_back(item["id"].get<std::string>());
          }
        }
      }
    }
    if (auto map = doc.find("severity"); map != doc.end() && map->is_object()) {
      for (const auto& [key, value] : map->items()) {
        named.push_back(key);
      }
    }
    if (auto added = set.add_code_rules(named); !added) {
      return Error{to_valid_utf8(file + ": " + added.error().message)};
    }
    named.clear();
    if (auto rows = doc.find("rules"); rows != doc.end()) {
      if (!rows->is_array()) {
        return at(file, "/rules", "must be an array of rule objects");
      }
      std::set<std::string> seen;
      for (std::size_t i = 0; i < rows->size(); ++i) {
        const Json& row = (*rows)[i];
        const std::string ptr = fmt::format("/rules/{}", i);
        if (!row.is_object()) {
          return at(file, ptr, "must be an object");
        }
        for (const auto& [key, value] : row.items()) {
          static const std::set<std::string> k_allowed{"id",     "severity",    "title", "remedy",
                                                       "source", "explanation", "check"};
          if (k_allowed.count(key) == 0) {
            return at(
                file, ptr + "/" + key,
                "unknown field (expected id, severity, title, remedy, source, explanation, check)");
          }
        }
        auto id_it = row.find("id");
        if (id_it == row.end()) {
          return at(file, ptr, "missing \"id\"");
        }
        TRY_ASSIGN(auto id, reader.text(*id_it, ptr + "/id"));
        if (!seen.insert(id).second) {
          return at(file, ptr + "/id", fmt::format("\"{}\" appears twice in this file", id));
        }
        auto existing = std::find_if(set.m_rules.begin(), set.m_rules.end(),
                                     [&](const Rule& r) { return r.id == id; });
        const bool is_new = existing == set.m_rules.end();
        if (is_new && !valid_id(id)) {
          return at(
              file, ptr + "/id",
              fmt::format(
                  "\"{}\" is not a rule id (dotted lowercase words, e.g. \"site.driver-min\")",
                  quote_evidence(id, 60)));
        }
        for (const char* required : {"severity", "remedy", "check"}) {
          if (is_new && row.find(required) == row.end()) {
            return at(file, ptr,
                      fmt::format("a new rule needs \"{}\" (\"{}\" is not a built-in rule id)",
                                  required, id));
          }
        }
        Rule rule = is_new ? Rule{} : *existing;
        if (is_new) {
          rule.id = set.keep(id);
          rule.stage = Stage::host;
          rule.source = set.keep(fmt::format("site rules file {}", file));
        }
        if (auto s = row.find("severity"); s != row.end()) {
          TRY_ASSIGN(auto level, reader.severity(*s, ptr + "/severity"));
          rule.severity = level;
        }
        for (auto [key, field] :
             {std::pair{"title", &rule.title}, std::pair{"remedy", &rule.remedy},
              std::pair{"source", &rule.source}, std::pair{"explanation", &rule.explanation}}) {
          if (auto f = row.find(key); f != row.end()) {
            TRY_ASSIGN(auto t, reader.text(*f, ptr + "/" + key));
            *field = set.keep(t);
            rule.site_remedy = rule.site_remedy || field == &rule.remedy;
          }
        }
        if (auto c = row.find("check"); c != row.end()) {
          TRY_ASSIGN(auto check, reader.check(*c, ptr + "/check"));
          rule.stage = fact_spec(check->fact)->stage;
          rule.check = make_check(check, id, rule.severity);
          if (rule.severity == Severity::fail) {
            rule.severity_from =
                "warn when the fact is unknown, so the policy could not be confirmed";
          }
          rule.evidence = set.keep(check->fact);
          if (row.find("title") == row.end()) {
            rule.title = set.keep("Site policy: " + check->description);
          }
          if (row.find("explanation") == row.end()) {
            rule.explanation =
                set.keep(fmt::format("Site policy from {}: {}.", file, check->description));
          }
        } else if (!is_new && rule.severity != existing->severity) {
          severities.emplace_back(id, rule.severity, ptr + "/severity");
        }
        if (is_new) {
          set.m_rules.push_back(std::move(rule));
        } else {
          *existing = std::move(rule);
        }
      }
    }
    if (auto list = doc.find("disable"); list != doc.end()) {
      TRY_ASSIGN(auto ids, reader.texts(*list, "/disable"));
      for (std::size_t i = 0; i < ids.size(); ++i) {
        disables.emplace_back(ids[i], list->is_array() ? fmt::format("{}: /disable/{}", file, i)
                                                       : file + ": /disable");
      }
    }
    if (auto map = doc.find("severity"); map != doc.end()) {
      if (!map->is_object()) {
        return at(file, "/severity",
                  "must be an object such as {\"driver.end-of-life\": \"warn\"}");
      }
      for (const auto& [key, value] : map->items()) {
        TRY_ASSIGN(auto level, reader.severity(value, "/severity/" + key));
        severities.emplace_back(key, level, fmt::format("{}: /severity/{}", file, key));
      }
    }
  }
  TRY(set.add_code_rules(named));
  for (const auto& id : overrides.disable) {
    disables.emplace_back(id, "--disable " + id);
  }
  for (const auto& arg : overrides.severity) {
    const auto eq = arg.rfind('=');
    const auto level = eq == std::string::npos ? std::nullopt : parse_severity(arg.substr(eq + 1));
    if (!level) {
      return Error{to_valid_utf8(fmt::format("--severity {}: expected ID=info|warn|fail", arg))};
    }
    severities.emplace_back(arg.substr(0, eq), *level, "--severity " + arg);
  }

  for (const auto& entry : severities) {
    const auto& [id, level, where] = entry;
    auto it = std::find_if(set.m_rules.begin(), set.m_rules.end(),
                           [&entry](const Rule& r) { return r.id == std::get<0>(entry); });
    if (it == set.m_rules.end()) {
      return Error{to_valid_utf8(
          fmt::format("{}: no rule \"{}\" (gpu-preflight rules lists them)", where, id))};
    }
    it->severity = level;
    // A row for one code drops its GPU exactly when the site makes it fail.
    const bool code_row = set.m_code_rules.count(std::string(it->id)) != 0;
    it->check = [inner = it->check, level = level, code_row](const RuleContext& c) {
      auto hits = inner(c);
      for (auto& h : hits) {
        h.severity = level;
        if (code_row && h.gpu) {
          h.effect = level == Severity::fail ? Effect::gpu_unusable : Effect::none;
        }
      }
      return hits;
    };
  }
  for (const auto& entry : disables) {
    const auto& [id, where] = entry;
    auto it = std::find_if(set.m_rules.begin(), set.m_rules.end(),
                           [&entry](const Rule& r) { return r.id == entry.first; });
    if (it == set.m_rules.end()) {
      return Error{to_valid_utf8(
          fmt::format("{}: no rule \"{}\" (gpu-preflight rules lists them)", where, id))};
    }
    set.m_rules.erase(it);
  }
  return set;
}

Result<RuleSet> RuleSet::load(std::span<const Rule> builtin, const RuleOverrides& overrides) {
  if (!overrides.rules_file) {
    return build(builtin, overrides);
  }
  const std::string& path = *overrides.rules_file;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{to_valid_utf8(fmt::format("{}: cannot open the rules file", path))};
  }
  std::string text(k_max_rules_file + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > k_max_rules_file) {
    return Error{to_valid_utf8(fmt::format("{}: larger than 1 MiB; not a rules file", path))};
  }
  return build(builtin, overrides, text);
}

} // namespace gpf

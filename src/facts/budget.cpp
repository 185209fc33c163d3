#include "gpf/facts/budget.hpp"

#include <cctype>

namespace gpf {

bool over_budget(const ProbeStatus& probe) {
  return probe.state == ProbeState::skipped && probe.message.rfind("budget:", 0) == 0;
}

std::string stage_name(const ProbeStatus& probe) {
  std::string name = probe.name;
  for (char& c : name) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

std::vector<std::string> stages_over_budget(const Facts& facts) {
  std::vector<std::string> out;
  for (const auto& p : facts.probes) {
    if (over_budget(p)) {
      out.push_back(stage_name(p));
    }
  }
  return out;
}

} // namespace gpf

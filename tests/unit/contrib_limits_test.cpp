// The shipped integrations against what the check needs: every memory limit in the Kubernetes
// manifests (contrib/kubernetes) must hold the live stage's host memory, computed from the code's
// own constants (host_memory_need_bytes: the children, the driver's share, the bandwidth step's
// pinned buffers), never from a figure typed in here; and docs/cuda-probe.md quotes that figure.
#include "probes/cuda/live_probe.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
using gpf::cuda::host_memory_need_bytes;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A Kubernetes quantity ("128Mi", "4Gi", "512M", "1073741824"), in bytes; nullopt when it is none
// of those forms.
std::optional<double> quantity_bytes(const std::string& v) {
  static const std::regex k_form(R"(^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$)");
  std::smatch m;
  if (!std::regex_match(v, m, k_form)) {
    return std::nullopt;
  }
  const double n = std::stod(m[1].str());
  const std::string unit = m[2].str();
  const double scale = unit == "Ki"   ? 1024.0
                       : unit == "Mi" ? 1024.0 * 1024
                       : unit == "Gi" ? 1024.0 * 1024 * 1024
                       : unit == "Ti" ? 1024.0 * 1024 * 1024 * 1024
                       : unit == "k"  ? 1e3
                       : unit == "M"  ? 1e6
                       : unit == "G"  ? 1e9
                       : unit == "T"  ? 1e12
                                      : 1.0;
  return n * scale;
}

std::size_t indent_of(const std::string& line) {
  return line.find_first_not_of(' ');
}

// One `limits:` block of a manifest: its memory and GPU count, where given.
struct Limits {
  int line = 0;
  std::optional<std::string> memory;
  std::optional<int> gpus;
};

// Every `limits:` block of a YAML file, read by indentation (the manifests are plain block YAML;
// tests/kubernetes/check-manifests.py checks their structure with a YAML parser).
std::vector<Limits> limits_blocks(const std::string& yaml) {
  std::vector<std::string> lines;
  std::stringstream ss(yaml);
  for (std::string l; std::getline(ss, l);) {
    lines.push_back(l);
  }
  std::vector<Limits> out;
  static const std::regex k_entry(R"re(^\s*([A-Za-z0-9./_-]+):\s*"?([^"#\s]*)"?\s*(#.*)?$)re");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto at = lines[i].find("limits:");
    if (at == std::string::npos || indent_of(lines[i]) != at) {
      continue;
    }
    Limits block;
    block.line = static_cast<int>(i + 1);
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      const auto ind = indent_of(lines[j]);
      if (ind == std::string::npos || lines[j][ind] == '#') {
        continue; // blank or comment
      }
      if (ind <= at) {
        break;
      }
      std::smatch m;
      if (std::regex_match(lines[j], m, k_entry)) {
        if (m[1] == "memory") {
          block.memory = m[2].str();
        } else if (m[1] == "nvidia.com/gpu") {
          block.gpus = std::stoi(m[2].str());
        }
      }
    }
    out.push_back(block);
  }
  return out;
}

// The GPUs a node-wide check (the DaemonSet, which sees every GPU of its node) is sized for.
constexpr int k_node_gpus = 8;
// node-problem-detector's own memory beside the check it runs (the DaemonSet's limit is shared).
constexpr double k_npd_own_bytes = 64.0 * 1024 * 1024;

} // namespace

TEST_CASE("contrib limits: the need comes from the code's constants and grows with the GPUs") {
  using namespace gpf::cuda;
  // the parts, not a total typed in: per GPU one CUDA child, one NVML child and one pinned buffer
  CHECK(host_memory_need_bytes(9, true) - host_memory_need_bytes(8, true) ==
        k_cuda_child_host_bytes + k_nvml_child_host_bytes + k_bandwidth_bytes);
  CHECK(host_memory_need_bytes(8, true) - host_memory_need_bytes(8, false) ==
        8 * k_bandwidth_bytes);
  // 8 GPUs cannot fit the limits once shipped (128Mi, 256Mi): the pinned buffers alone are 1 GiB
  CHECK(host_memory_need_bytes(8, true) > (256u << 20));
  CHECK(8 * k_bandwidth_bytes > (256u << 20));
}

TEST_CASE("contrib limits: every memory limit of the Kubernetes manifests holds the live stage") {
  const fs::path dir = fs::path(GPF_SOURCE_DIR) / "contrib" / "kubernetes";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") {
      continue;
    }
    const std::string yaml = slurp(entry.path());
    const bool runs_check = yaml.find("gpu-preflight") != std::string::npos &&
                            (yaml.find("- check") != std::string::npos ||
                             yaml.find("node-problem-detector") != std::string::npos);
    if (!runs_check) {
      continue;
    }
    const bool npd = yaml.find("/node-problem-detector") != std::string::npos;
    for (const auto& block : limits_blocks(yaml)) {
      if (!block.memory) {
        continue; // no limit: nothing to run out of (the init container's, for one)
      }
      const std::string where = fmt::format("{}:{}", entry.path().filename().string(), block.line);
      INFO(where << ": memory " << *block.memory);
      const auto bytes = quantity_bytes(*block.memory);
      REQUIRE(bytes);
      const int gpus = block.gpus.value_or(k_node_gpus);
      const double need =
          static_cast<double>(host_memory_need_bytes(static_cast<std::size_t>(gpus), true)) +
          (npd ? k_npd_own_bytes : 0);
      INFO("needs " << need / (1024 * 1024) << " MiB on " << gpus << " GPUs");
      CHECK(*bytes >= need);
      ++checked;
    }
  }
  // the Job and the node-problem-detector DaemonSet both set one: the test is not vacuous
  CHECK(checked >= 2);
}

TEST_CASE("contrib limits: docs/cuda-probe.md quotes the need the code computes") {
  const std::string doc = slurp(fs::path(GPF_SOURCE_DIR) / "docs" / "cuda-probe.md");
  const auto mib = [](std::size_t bytes) {
    const std::string n = std::to_string(bytes >> 20);
    return n.size() > 3 ? n.substr(0, n.size() - 3) + "," + n.substr(n.size() - 3) : n;
  };
  CHECK_THAT(doc, Catch::Contains("(" + mib(host_memory_need_bytes(8, true)) + " MiB)"));
  CHECK_THAT(doc, Catch::Contains("(" + mib(host_memory_need_bytes(4, true)) + " MiB)"));
  CHECK_THAT(doc, Catch::Contains("(" + mib(host_memory_need_bytes(8, false)) + " MiB)"));
}

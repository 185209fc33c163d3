// The active step's embedded PTX assembled by NVIDIA's ptxas for every architecture the
// compatibility data lists from Kepler on (data/cuda_architectures.json), where ptxas is at hand:
// GPF_PTXAS, else ptxas on PATH, else /usr/local/cuda/bin/ptxas (Debian's non-free
// nvidia-cuda-toolkit has it). Skipped with the reason where it is not; an architecture this
// ptxas does not know (CUDA 13 dropped Maxwell to Volta) is named, not failed.
#include "probes/cuda/kernels.hpp"
#include "support/lookup.hpp"
#include "support/run.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::string find_ptxas() {
  if (const char* p = std::getenv("GPF_PTXAS"); p && *p) {
    return p;
  }
  if (gpf::test::run_program({"ptxas", "--version"}).exit_code == 0) {
    return "ptxas";
  }
  const std::string local = "/usr/local/cuda/bin/ptxas";
  return ::access(local.c_str(), X_OK) == 0 ? local : std::string();
}

// "sm_90" for "9.0", "sm_121" for "12.1": every compute capability of an architecture that CUDA
// 9.0 (PTX ISA 6.0) still supports.
std::vector<std::string> architectures() {
  std::ifstream in(std::string(GPF_FIXTURES_DIR) + "/../../data/cuda_architectures.json");
  const auto doc = nlohmann::json::parse(in);
  std::vector<std::string> out;
  for (const auto& row : doc.at("rows")) {
    const auto& removed = row.at("removed_in");
    if (removed.is_string() && removed.get<std::string>() == "9.0") {
      continue; // Fermi: no driver that JITs ISA 6.0 runs it
    }
    for (const auto& cc : row.at("cc")) {
      std::string s = cc.get<std::string>();
      s.erase(s.find('.'), 1);
      out.push_back("sm_" + s);
    }
  }
  return out;
}

} // namespace

TEST_CASE("active kernels: the embedded PTX assembles with ptxas for every architecture") {
  const std::string ptxas = find_ptxas();
  if (ptxas.empty()) {
    WARN("skipped: no ptxas (set GPF_PTXAS, or install Debian's non-free nvidia-cuda-toolkit)");
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("gpf-ptx-{}", static_cast<long>(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "kernels.ptx";
  const auto text = gpf::cuda::kernels_ptx();
  std::ofstream(file) << text.substr(0, text.size() - 1); // without the NUL
  std::vector<std::string> assembled;
  std::vector<std::string> unknown;
  for (const auto& arch : architectures()) {
    const auto r = gpf::test::run_program(
        {ptxas, "--gpu-name", arch, file.string(), "-o", (dir / (arch + ".cubin")).string()});
    if (r.exit_code != 0 &&
        r.err.find("is not defined for option 'gpu-name'") != std::string::npos) {
      unknown.push_back(arch);
      continue;
    }
    INFO(arch << ": " << r.err);
    CHECK(r.exit_code == 0);
    assembled.push_back(arch);
  }
  std::filesystem::remove_all(dir);
  WARN(fmt::format("{} assembled for {}; not known to this ptxas: {}", ptxas,
                   fmt::join(assembled, " "),
                   unknown.empty() ? "none" : fmt::format("{}", fmt::join(unknown, " "))));
  CHECK_FALSE(assembled.empty());
}

// The driver children cannot change the host (ctest label security). NVIDIA's cuInit and nvmlInit
// re-create /dev/char/195:255; the fake libraries do the same at FAKE_*_LINK_AT. Run as root with a
// private mount namespace, a link in /dev never appears; in a directory the isolation does not
// cover, it does (so the test can see the library's write).
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace gpf::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool exists_as_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

json live_check(const std::string& cuda_link, const std::string& nvml_link) {
  const RunResult r = run_preflight({"--root", fixture("cuda-4gpu"), "--libcuda", GPF_FAKE_LIBCUDA,
                                     "--libnvml", GPF_FAKE_LIBNVML, "--format", "json"},
                                    {{"FAKE_CUDA_GPUS", "4"},
                                     {"FAKE_CUDA_LINK_AT", cuda_link},
                                     {"FAKE_NVML_LINK_AT", nvml_link}});
  INFO(r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  return json::parse(r.out);
}

} // namespace

TEST_CASE("isolation: a driver library cannot create a link in /dev") {
  const std::string base = "/dev/gpf-isolation-test-" + std::to_string(::getpid());
  const std::string cuda_link = base + "-cuda";
  const std::string nvml_link = base + "-nvml";
  const json report = live_check(cuda_link, nvml_link);
  const bool created = exists_as_link(cuda_link) || exists_as_link(nvml_link);
  ::unlink(cuda_link.c_str());
  ::unlink(nvml_link.c_str());

  for (const char* stage : {"cuda", "nvml"}) {
    INFO(stage);
    const json& iso = report.at("facts").at(stage).at("isolation");
    REQUIRE(iso.is_object());
    const std::string detail = iso.at("detail").get<std::string>();
    INFO(detail);
    if (!iso.at("isolated").get<bool>()) {
      // root without CAP_SYS_ADMIN: the run goes on and the report says so
      CHECK(finding(report, "probe.driver-not-isolated") != nullptr);
      WARN("skipped: the children could not be isolated here: " << detail);
      return;
    }
    CHECK(detail.find(::geteuid() == 0 ? "private mount namespace: /dev read-only"
                                       : "no_new_privs") != std::string::npos);
  }
  CHECK_FALSE(created);
  CHECK(finding(report, "probe.driver-not-isolated") == nullptr);
}

TEST_CASE("isolation: the fake libraries' writes are visible where isolation does not reach") {
  TempDir dir; // not under /dev: the children may write here
  const std::string cuda_link = (dir.path / "cuda-link").string();
  const std::string nvml_link = (dir.path / "nvml-link").string();
  live_check(cuda_link, nvml_link);
  CHECK(exists_as_link(cuda_link));
  CHECK(exists_as_link(nvml_link));
}

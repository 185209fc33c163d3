// Every input a fuzz target ever crashed on (tests/fuzz-regressions/<target>/) runs through the
// same target code in the normal build, with its properties as exceptions instead of aborts. A
// few fixture files go through each target too, so the harness itself is exercised even when a
// target has no saved reproducer.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#define GPF_DECLARE_FUZZ_TARGET(name)                                                              \
  int gpf_fuzz_##name(const std::uint8_t* data, std::size_t size);
GPF_DECLARE_FUZZ_TARGET(kernel_release)
GPF_DECLARE_FUZZ_TARGET(devices_manifest)
GPF_DECLARE_FUZZ_TARGET(driver_version)
GPF_DECLARE_FUZZ_TARGET(params)
GPF_DECLARE_FUZZ_TARGET(registry)
GPF_DECLARE_FUZZ_TARGET(gpu_information)
GPF_DECLARE_FUZZ_TARGET(modules)
GPF_DECLARE_FUZZ_TARGET(environ)
GPF_DECLARE_FUZZ_TARGET(log_line)
GPF_DECLARE_FUZZ_TARGET(log_scanner)
GPF_DECLARE_FUZZ_TARGET(cuda_json)
GPF_DECLARE_FUZZ_TARGET(user_rules)
GPF_DECLARE_FUZZ_TARGET(ld_cache)
GPF_DECLARE_FUZZ_TARGET(render)
GPF_DECLARE_FUZZ_TARGET(redactor)
GPF_DECLARE_FUZZ_TARGET(sysfs_links)
GPF_DECLARE_FUZZ_TARGET(explain_log)

namespace {
namespace fs = std::filesystem;
using Target = int (*)(const std::uint8_t*, std::size_t);

// target name -> (function, a fixture file for the smoke run)
const std::map<std::string, std::pair<Target, std::string>>& targets() {
  static const std::map<std::string, std::pair<Target, std::string>> table = {
      {"kernel_release", {gpf_fuzz_kernel_release, "rhel8-kernel/proc/sys/kernel/osrelease"}},
      {"devices_manifest", {gpf_fuzz_devices_manifest, "garbage-files/devices.json"}},
      {"driver_version", {gpf_fuzz_driver_version, "healthy-4gpu/proc/driver/nvidia/version"}},
      {"params", {gpf_fuzz_params, "gsp-disabled-open/proc/driver/nvidia/params"}},
      {"registry", {gpf_fuzz_registry, "registry-keys/proc/driver/nvidia/registry"}},
      {"gpu_information",
       {gpf_fuzz_gpu_information, "healthy-4gpu/proc/driver/nvidia/gpus/0000:18:00.0/information"}},
      {"modules", {gpf_fuzz_modules, "nouveau/proc/modules"}},
      {"environ", {gpf_fuzz_environ, "environ-unknown-entry/environ"}},
      {"log_line", {gpf_fuzz_log_line, "log-app-xids/dmesg.txt"}},
      {"log_scanner", {gpf_fuzz_log_scanner, "log-earlier-boot-xid48/dmesg.txt"}},
      {"cuda_json", {gpf_fuzz_cuda_json, "cuda-replay-gpu-hung/cuda.json"}},
      {"user_rules",
       {gpf_fuzz_user_rules, "garbage-files/devices.json"}}, // not a rules file: refused
      {"ld_cache", {gpf_fuzz_ld_cache, "compat-lib-mismatch/etc/ld.so.cache"}},
      {"render", {gpf_fuzz_render, "garbage-files/proc/driver/nvidia/version"}},
      {"redactor", {gpf_fuzz_redactor, "log-xid79-one-of-8/dmesg.txt"}},
      {"explain_log",
       {gpf_fuzz_explain_log, "../data/explain-log/nvidia-smi-no-driver-nouveau.log"}},
      {"sysfs_links",
       {gpf_fuzz_sysfs_links,
        "pcie-aer-bridge/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/aer_dev_nonfatal"}},
  };
  return table;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int run(Target target, const std::string& bytes) {
  return target(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

} // namespace

TEST_CASE("fuzz regressions: every saved crash input runs clean through its target") {
  const fs::path dir = fs::path(GPF_SOURCE_DIR) / "tests" / "fuzz-regressions";
  std::size_t replayed = 0;
  for (const auto& target_dir : fs::directory_iterator(dir)) {
    if (!target_dir.is_directory()) {
      continue;
    }
    const auto name = target_dir.path().filename().string();
    INFO("target " << name);
    const auto it = targets().find(name);
    REQUIRE(it != targets().end()); // a folder must name a real target
    for (const auto& input : fs::directory_iterator(target_dir.path())) {
      INFO("input " << input.path().string());
      CHECK_NOTHROW(run(it->second.first, read_all(input.path())));
      ++replayed;
    }
  }
  INFO("replayed " << replayed << " saved inputs");
  SUCCEED();
}

TEST_CASE(
    "fuzz regressions: each target's harness runs on a fixture file, an empty and a junk input") {
  for (const auto& [name, entry] : targets()) {
    INFO("target " << name);
    const auto& [target, file] = entry;
    const std::string fixture = read_all(fs::path(GPF_FIXTURES_DIR) / file);
    REQUIRE_FALSE(fixture.empty());
    CHECK_NOTHROW(run(target, fixture));
    CHECK_NOTHROW(run(target, ""));
    CHECK_NOTHROW(run(target, std::string("\xff\xfe\0\\x{[\"\n\r", 11)));
  }
}

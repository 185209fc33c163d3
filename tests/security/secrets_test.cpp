// Secrets never reach a snapshot (ctest label security): the environment is cut to the variables
// the checks read, names that look like secrets are dropped even then, and credentials in URLs are
// replaced; checked over every byte of every file the capture wrote.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace gpf::test;
namespace fs = std::filesystem;

namespace {

const std::map<std::string, std::string> k_secrets{
    {"NVIDIA_API_KEY", "nvapi-secret-1"},
    {"CUDA_TOKEN", "secret-2"},
    {"NCCL_SOCKET_PASSWORD", "secret-3"},
    {"HF_TOKEN", "hf_secret4"},
    {"AWS_SECRET_ACCESS_KEY", "secret-5"},
    {"NVIDIA_DRIVER_CAPABILITIES", "secret-6"},
    {"CUDA_HOME", "https://alice:hunter2@repo.example/cuda"},
};

std::string everything_in(const fs::path& dir) {
  std::string all;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && !e.is_symlink()) {
      std::ifstream in(e.path(), std::ios::binary);
      all += std::string(std::istreambuf_iterator<char>(in), {});
    }
    all += e.path().string() + "\n";
  }
  return all;
}

void check_clean(const fs::path& dir) {
  const std::string all = everything_in(dir);
  for (const char* secret : {"nvapi-secret-1", "secret-2", "secret-3", "hf_secret4", "secret-5",
                             "secret-6", "hunter2", "alice"}) {
    INFO(secret);
    CHECK(all.find(secret) == std::string::npos);
  }
  std::ifstream env(dir / "environ");
  const std::string kept(std::istreambuf_iterator<char>(env), {});
  CHECK(kept.find("CUDA_VISIBLE_DEVICES=1,0\n") != std::string::npos); // what the rules read stays
  CHECK(kept.find("CUDA_HOME=https://REDACTED@repo.example/cuda\n") != std::string::npos);
}

} // namespace

TEST_CASE(
    "security: secrets in the live environment never reach a snapshot, with or without --redact") {
  for (const bool redact : {false, true}) {
    INFO("redact " << redact);
    TempDir t;
    auto env = k_secrets;
    env["CUDA_VISIBLE_DEVICES"] = "1,0";
    std::vector<std::string> args{"snapshot", "--no-cuda", "-o", (t.path / "snap").string()};
    if (redact) {
      args.push_back("--redact");
    }
    REQUIRE(run_preflight(args, env).exit_code == 0);
    check_clean(t.path / "snap");
  }
}

TEST_CASE("security: secrets in a source snapshot's environ are not copied on") {
  TempDir src;
  fs::copy(fixture("healthy-4gpu"), src.path,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing |
               fs::copy_options::copy_symlinks);
  std::string environ = "CUDA_VISIBLE_DEVICES=1,0\n";
  for (const auto& [name, value] : k_secrets) {
    environ += name + "=" + value + "\n";
  }
  src.write("environ", environ);
  TempDir t;
  REQUIRE(run_preflight({"snapshot", "--root", src.path.string(), "-o", (t.path / "snap").string()})
              .exit_code == 0);
  check_clean(t.path / "snap");
}

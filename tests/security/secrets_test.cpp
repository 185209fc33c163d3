// Secrets never reach a snapshot (ctest label security): the environment is cut to the variables
// the checks read, names that look like secrets are dropped even then, and credentials in URLs are
// replaced; checked over every byte of every file the capture wrote.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

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

TEST_CASE("security: a snapshot keeps no file a process holds open, only NVIDIA device links") {
  // A job's open file, under a /home/<user>/... path (in a temporary directory), held open by this
  // test process while the live snapshot lists every process's descriptors.
  TempDir t;
  const fs::path secret = t.path / "home/alice/projects/llm-secret/shard-0001.bin";
  t.write("home/alice/projects/llm-secret/shard-0001.bin", "weights");
  std::ifstream held(secret, std::ios::binary);
  REQUIRE(held);
  const auto own_fd_dir = fs::path("/proc") / std::to_string(::getpid()) / "fd";
  bool held_seen = false;
  for (const auto& e : fs::directory_iterator(own_fd_dir)) {
    std::error_code ec;
    held_seen = held_seen || fs::read_symlink(e.path(), ec) == secret;
  }
  REQUIRE(held_seen); // the link the capture will read

  for (const bool redact : {true, false}) {
    INFO("--redact " << redact);
    const fs::path dir = t.path / (redact ? "snap-redacted" : "snap");
    std::vector<std::string> args{"snapshot", "--no-cuda", "--no-nvml", "-o", dir.string()};
    if (redact) {
      args.emplace_back("--redact");
    }
    const auto cap = run_preflight(args);
    INFO(cap.err);
    REQUIRE(cap.exit_code == 0);
    std::size_t placeholders = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_symlink()) {
        continue;
      }
      const std::string target = fs::read_symlink(e.path()).string();
      INFO(e.path().string() << " -> " << target);
      CHECK(target.find("llm-secret") == std::string::npos);
      CHECK(target.find("/home/alice") == std::string::npos);
      if (e.path().parent_path().filename() == "fd") {
        // a descriptor keeps its target only when it is an NVIDIA device node
        CHECK((target == "not-kept" || target.find("nvidia") != std::string::npos));
        placeholders += target == "not-kept" ? 1 : 0;
      }
    }
    CHECK(placeholders > 0); // this process's own descriptors at least
    const auto own = dir / "proc" / std::to_string(::getpid()) / "fd";
    CHECK(fs::is_directory(own));
    // the snapshot still replays
    const auto replay = run_preflight({"--root", dir.string(), "--format", "json"});
    CHECK((replay.exit_code == 0 || replay.exit_code == 1));
  }
}

TEST_CASE("security: credentials in a snapshot's cuda.json are scrubbed and it stays valid JSON") {
  TempDir src;
  fs::copy(fixture("cause-one-gpu-breaks-cuinit"), src.path,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing |
               fs::copy_options::copy_symlinks);
  std::ifstream in(src.path / "cuda.json", std::ios::binary);
  std::string cuda(std::istreambuf_iterator<char>(in), {});
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = cuda.find(from);
    REQUIRE(at != std::string::npos);
    cuda.replace(at, from.size(), to);
  };
  // a value ending in a credential (the scrubber took the closing quote and the comma with it),
  // and a quoted passphrase inside a string (escaped quotes)
  replace("\"library\": \"libcuda.so.1\"", "\"library\": \"libcuda.so.1 token=S3cr3t-1\"");
  replace(
      "\"load_error\": \"\"",
      "\"load_error\": \"opened with passphrase=\\\"S3cr3t 2 with blanks\\\" and apikey=S3cr3t-3\"");
  src.write("cuda.json", cuda);
  const auto before = run_preflight({"--root", src.path.string(), "--format", "json"});
  REQUIRE((before.exit_code == 0 || before.exit_code == 1));

  TempDir t;
  const fs::path dir = t.path / "snap";
  REQUIRE(run_preflight({"snapshot", "--root", src.path.string(), "-o", dir.string()}).exit_code ==
          0);
  std::ifstream kept_in(dir / "cuda.json", std::ios::binary);
  const std::string kept(std::istreambuf_iterator<char>(kept_in), {});
  CHECK(kept.find("S3cr3t") == std::string::npos);
  CHECK(nlohmann::json::accept(kept));
  CHECK(kept.find("token=REDACTED") != std::string::npos);
  const auto after = run_preflight({"--root", dir.string(), "--format", "json"});
  REQUIRE((after.exit_code == 0 || after.exit_code == 1));
  CHECK(after.out.find("S3cr3t") == std::string::npos);
  // the report held by name: a range-for over a temporary's member reads freed memory
  const auto report = after.json();
  for (const auto& f : report.at("findings")) {
    CHECK(f.at("id") != "probe.failed");
  }
  CHECK(report.at("verdict") == before.json().at("verdict"));
}

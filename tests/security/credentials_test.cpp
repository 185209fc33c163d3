// Credentials outside the environment (ctest label security): kernel command-line passwords and
// tokens, and user:password@ targets, never reach a snapshot or a report, with or without
// --redact (tests/data/credentials/corpus.txt: each line and what is kept of it); --redact also
// replaces the USB core's SerialNumber lines.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

using namespace gpf::test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// (in, out) pairs of the corpus.
std::vector<std::pair<std::string, std::string>> corpus() {
  std::ifstream in(GPF_TEST_DATA_DIR "/credentials/corpus.txt");
  REQUIRE(in);
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("in: ", 0) == 0) {
      pairs.emplace_back(line.substr(4), "");
    } else if (line.rfind("out: ", 0) == 0) {
      REQUIRE(!pairs.empty());
      pairs.back().second = line.substr(5);
    }
  }
  REQUIRE(pairs.size() >= 10);
  return pairs;
}

std::string everything_in(const fs::path& dir) {
  std::string all;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && !e.is_symlink()) {
      all += slurp(e.path()) + "\n";
    }
  }
  return all;
}

void copy_fixture(const TempDir& t, const std::string& name) {
  fs::copy(fixture(name), t.path,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing |
               fs::copy_options::copy_symlinks);
}

constexpr const char* k_usb_lines =
    "[    3.100000] usb 1-4: New USB device strings: Mfr=1, Product=2, SerialNumber=3\n"
    "[    3.100001] usb 1-4: SerialNumber: KEYFOB S3rialOne\n"
    "[    3.100002] usb 2-1: SerialNumber: 0000S3rialTwo42\n";

} // namespace

TEST_CASE("security: kernel command-line credentials never reach a snapshot or a report") {
  const auto pairs = corpus();
  TempDir t;
  copy_fixture(t, "healthy-4gpu");
  std::string cmdline_in;
  std::string cmdline_out;
  std::string log;
  for (const auto& [in, out] : pairs) {
    cmdline_in += (cmdline_in.empty() ? "" : " ") + in;
    cmdline_out += (cmdline_out.empty() ? "" : " ") + out;
    log += in + "\n";
  }
  t.write("proc/cmdline", cmdline_in + "\n");
  t.write("dmesg.txt", log + k_usb_lines);

  for (const bool redact : {false, true}) {
    INFO("--redact: " << redact);
    const auto dir = t.path / (redact ? "snap-redacted" : "snap");
    std::vector<std::string> args{"snapshot", "--root", t.path.string(), "-o", dir.string()};
    if (redact) {
      args.emplace_back("--redact");
    }
    const auto cap = run_preflight(args);
    INFO(cap.err);
    REQUIRE(cap.exit_code == 0);
    const std::string all = everything_in(dir);
    CHECK(all.find("S3cr3t") == std::string::npos);
    if (!redact) {
      // byte for byte what the corpus says, nothing else changed
      CHECK(slurp(dir / "proc/cmdline") == cmdline_out + "\n");
      const std::string kept_log = slurp(dir / "dmesg.txt");
      for (const auto& [in, out] : pairs) {
        INFO(in);
        CHECK(kept_log.find(out + "\n") != std::string::npos);
      }
      CHECK(kept_log.find("S3rialOne") != std::string::npos); // serials are --redact's
    } else {
      CHECK(all.find("S3rial") == std::string::npos);
      CHECK(slurp(dir / "dmesg.txt").find("usb 1-4: SerialNumber: serial-") != std::string::npos);
      CHECK(slurp(dir / "dmesg.txt").find("SerialNumber=3") != std::string::npos);
    }
    // the snapshot still replays
    const auto replay = run_preflight({"--root", dir.string(), "--format", "json"});
    CHECK((replay.exit_code == 0 || replay.exit_code == 1));
  }

  // the check's own report holds no secret either: iommu.translated quotes /proc/cmdline
  TempDir iommu;
  copy_fixture(iommu, "topo-iommu-translated");
  const std::string line = slurp(iommu.path / "proc/cmdline");
  iommu.write("proc/cmdline", line.substr(0, line.find('\n')) + " " + cmdline_in + "\n");
  for (const char* format : {"json", "text"}) {
    const auto r = run_preflight({"--root", iommu.path.string(), "--format", format, "--verbose"});
    INFO(format << ": " << r.err);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK(r.out.find("S3cr3t") == std::string::npos);
    CHECK(r.out.find("rd.iscsi.password=REDACTED") != std::string::npos); // quoted, cut
  }
}

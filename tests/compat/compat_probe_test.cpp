// The compat probe on small snapshot trees built by the test: symbolic links resolved inside the
// root (absolute, relative, dangling, looping, escaping), merged-/usr directory links, the
// expected-CUDA sources and module versions.
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace gpf;
namespace fs = std::filesystem;

namespace {

class Tree {
public:
  Tree() {
    static int counter = 0;
    m_root = fs::temp_directory_path() /
             ("gpf-compat-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::create_directories(m_root);
  }
  ~Tree() { fs::remove_all(m_root); }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  const fs::path& root() const { return m_root; }

  void file(const std::string& rel, const std::string& text = "") {
    fs::create_directories((m_root / rel).parent_path());
    std::ofstream(m_root / rel) << text;
  }
  void link(const std::string& rel, const std::string& target) {
    fs::create_directories((m_root / rel).parent_path());
    fs::create_symlink(target, m_root / rel);
  }
  Facts probe(std::optional<std::string> expect = std::nullopt) const {
    auto host = Host::snapshot(m_root);
    REQUIRE(host);
    ProbeOptions o;
    o.no_cuda = true;
    o.expect_cuda = std::move(expect);
    return collect_facts(*host, o);
  }

private:
  fs::path m_root;
};

const LibrarySearchStep* step_in(const DriverLibrary& lib, const std::string& dir) {
  for (const auto& s : lib.searched) {
    if (s.dir == dir) {
      return &s;
    }
  }
  return nullptr;
}

} // namespace

TEST_CASE(
    "probe: an absolute link inside a snapshot resolves inside the snapshot, through a merged /lib") {
  Tree t;
  t.link("lib", "usr/lib"); // merged /usr, relative
  t.file("usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14");
  t.link("usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14");
  const auto f = t.probe();
  const auto& lib = f.compat.libcuda;
  REQUIRE(lib.path);
#if defined(__x86_64__)
  CHECK(*lib.path ==
        "/lib/x86_64-linux-gnu/libcuda.so.1"); // the first default directory, through the link
  CHECK(*lib.resolved == "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14");
#endif
  CHECK(lib.version_text == "550.54.14");
  CHECK(lib.via == "default directory");
}

TEST_CASE(
    "probe: dangling, looping and escaping links are reported, never followed out of the root") {
  Tree t;
  t.link("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml.so.999.99");
  t.link("usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.1");
  t.link("usr/lib64/libcuda.so.1", "../../../../../../../../etc/hostname");
  const auto f = t.probe();
  CHECK_FALSE(f.compat.libcuda.path);
  CHECK_FALSE(f.compat.libnvidia_ml.path);
#if defined(__x86_64__)
  const auto* loop = step_in(f.compat.libcuda, "/usr/lib/x86_64-linux-gnu");
  REQUIRE(loop);
  CHECK(loop->result == "too many levels of symbolic links");
  const auto* escape = step_in(f.compat.libcuda, "/usr/lib64");
  REQUIRE(escape);
  CHECK(escape->result ==
        "dangling link to /etc/hostname"); // the snapshot's /etc/hostname, which it lacks
  const auto* dangling = step_in(f.compat.libnvidia_ml, "/usr/lib/x86_64-linux-gnu");
  REQUIRE(dangling);
  CHECK(dangling->result == "dangling link to /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.999.99");
  const auto* absent = step_in(f.compat.libnvidia_ml, "/usr/lib");
  REQUIRE(absent);
  CHECK(absent->result == "not present");
#endif
}

TEST_CASE("probe: the library search asks nothing below a directory that is not there") {
  Tree t;
  t.file("etc/hostname", "n1\n"); // a snapshot without lib/ or usr/
  auto snapshot = Host::snapshot(t.root());
  REQUIRE(snapshot);
  Host host = std::move(snapshot).value();
  std::vector<HostAccess> log;
  host.record_into(&log);
  ProbeOptions o;
  o.no_cuda = true;
  const auto f = collect_facts(host, o);
  host.record_into(nullptr);
  CHECK_FALSE(f.compat.libcuda.path);
  bool asked_usr = false;
  for (const auto& a : log) {
    asked_usr = asked_usr || a.path == "usr";
    INFO(a.path);
    const bool below_absent = a.path == "usr/lib" || a.path == "usr/lib64" ||
                              a.path.find("x86_64-linux-gnu") != std::string::npos ||
                              a.path.find(".so.1") != std::string::npos;
    CHECK_FALSE(below_absent);
  }
  CHECK(asked_usr); // the walk did look, and stopped at the first absent component
  for (const auto& step : f.compat.libcuda.searched) {
    CHECK(step.result == "not present");
  }
}

TEST_CASE(
    "probe: LD_LIBRARY_PATH comes first; relative and empty entries are skipped, not guessed") {
  Tree t;
  t.file("environ", "LD_LIBRARY_PATH=:lib:$ORIGIN/x:/opt/drv\n");
  t.file("opt/drv/libcuda.so.535.104.05");
  t.link("opt/drv/libcuda.so.1", "libcuda.so.535.104.05");
  t.file("usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14");
  t.link("usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.550.54.14");
  const auto f = t.probe();
  const auto& lib = f.compat.libcuda;
  REQUIRE(lib.path);
  CHECK(*lib.path == "/opt/drv/libcuda.so.1");
  CHECK(lib.via == "LD_LIBRARY_PATH");
  REQUIRE(lib.searched.size() == 4);
  CHECK(lib.searched[0].result == "skipped: not an absolute directory");
  CHECK(lib.searched[1].dir == "lib");
  CHECK(lib.searched[2].dir == "$ORIGIN/x");
  CHECK(lib.searched[3].result == "found");
}

TEST_CASE("probe: the expected CUDA version and where it came from") {
  {
    Tree t;
    t.file("usr/local/cuda/version.json", R"({"cuda": {"version": "12.4.1"}})");
    const auto f = t.probe();
    REQUIRE(f.compat.expected_cuda);
    CHECK(f.compat.expected_cuda->text == "12.4.1");
    CHECK(f.compat.expected_cuda->source == "/usr/local/cuda/version.json");
    const auto g = t.probe("12.1"); // --expect-cuda wins
    CHECK(g.compat.expected_cuda->source == "--expect-cuda");
    CHECK(g.compat.expected_cuda->text == "12.1");
  }
  {
    Tree t;
    t.file("environ", "CUDA_HOME=/opt/cuda-10.2\n");
    t.file("opt/cuda-10.2/version.txt", "CUDA Version 10.2.89\n");
    t.file("usr/local/cuda/version.json", R"({"cuda": {"version": "12.4.1"}})");
    const auto f = t.probe();
    REQUIRE(f.compat.expected_cuda);
    CHECK(f.compat.expected_cuda->text == "10.2.89");
    CHECK(f.compat.expected_cuda->source == "CUDA_HOME=/opt/cuda-10.2: /opt/cuda-10.2/version.txt");
  }
  {
    Tree t;
    t.file("environ", "CUDA_HOME=relative/cuda\n");
    t.file("usr/local/cuda/version.json", "{\"cuda\": garbage");
    const auto f = t.probe();
    CHECK_FALSE(f.compat.expected_cuda);
    REQUIRE(f.compat.expected_cuda_notes.size() == 1);
    CHECK(f.compat.expected_cuda_notes[0] ==
          "/usr/local/cuda/version.json: no CUDA version in \"{\"cuda\": garbage\"");
  }
}

TEST_CASE("probe: kernel module versions, including unreadable ones") {
  Tree t;
  t.file("proc/modules",
         "nvidia_uvm 1 0 - Live\nnvidia 1 1 nvidia_uvm, Live\nnvidia_modeset 1 0 - Live\n");
  t.file("sys/module/nvidia/version", "550.54.14\n");
  t.file("sys/module/nvidia_uvm/version", "\xff garbage\n");
  const auto f = t.probe();
  REQUIRE(f.compat.modules.size() == 3);
  CHECK(f.compat.modules[0].name == "nvidia");
  CHECK(f.compat.modules[0].text == "550.54.14");
  CHECK(f.compat.modules[1].name == "nvidia_uvm");
  CHECK_FALSE(f.compat.modules[1].version);
  CHECK(f.compat.modules[1].error.find("not a version") != std::string::npos);
  CHECK(f.compat.modules[2].name == "nvidia_modeset");
  CHECK(f.compat.modules[2].error ==
        "/sys/module/nvidia_modeset/version: No such file or directory");
  const auto* status = f.probe("compat");
  REQUIRE(status);
  CHECK(status->state ==
        ProbeState::ok); // a snapshot that did not record a file is not a probe failure
}

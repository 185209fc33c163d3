// The Host's kernel-log doors: the snapshot's dmesg.txt (streamed), dmesg.error (an injected read
// error), a missing log, --dmesg files and stdin, and the live log (never blocks).
#include "gpf/host/host.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace gpf;
namespace fs = std::filesystem;
using gpf::test::TempDir;

namespace {

// Reads a stream to its end in small pieces.
std::string drain(ByteStream& s, std::size_t piece = 7) {
  std::string out;
  std::string buf(piece, '\0');
  for (;;) {
    auto n = s.read(buf.data(), buf.size());
    REQUIRE(n.ok());
    if (*n == 0) {
      return out;
    }
    out.append(buf.data(), *n);
  }
}
} // namespace

TEST_CASE("snapshot: dmesg.txt is streamed, its absence is no log") {
  TempDir t;
  const auto empty = Host::snapshot(t.path).value();
  const auto none = empty.open_kernel_log();
  REQUIRE(none.ok());
  CHECK(*none == nullptr);

  const std::string text =
      "[    1.000000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n";
  t.write("dmesg.txt", text);
  const auto host = Host::snapshot(t.path).value();
  auto stream = host.open_kernel_log();
  REQUIRE(stream.ok());
  REQUIRE(*stream != nullptr);
  CHECK((*stream)->name() == "dmesg.txt");
  auto owned = std::move(stream).value();
  CHECK(drain(*owned) == text);
}

TEST_CASE("snapshot: dmesg.error stands for a log that cannot be read") {
  TempDir t;
  t.write("dmesg.txt", "ignored\n");
  t.write("dmesg.error", "Operation not permitted\n");
  const auto r = Host::snapshot(t.path).value().open_kernel_log();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "dmesg.txt: Operation not permitted (recorded in the snapshot's dmesg.error)");
}

TEST_CASE("snapshot: an unreadable or odd dmesg.txt is an error with the OS reason") {
  TempDir t;
  fs::create_directories(t.path / "dmesg.txt");
  const auto dir = Host::snapshot(t.path).value().open_kernel_log();
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().message == "dmesg.txt: Is a directory");
  if (::geteuid() != 0) { // root reads a mode-000 file anyway; dmesg.error covers that case
    TempDir u;
    u.write("dmesg.txt", "x\n");
    fs::permissions(u.path / "dmesg.txt", fs::perms::none);
    const auto denied = Host::snapshot(u.path).value().open_kernel_log();
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.error().message == "dmesg.txt: Permission denied");
  }
}

TEST_CASE("user files for --dmesg: a path of the invoking machine, or stdin") {
  TempDir t;
  t.write("kern.log", "hello\n");
  const auto host = Host::snapshot(t.path).value();
  auto file = host.open_user_file((t.path / "kern.log").string());
  REQUIRE(file.ok());
  auto owned = std::move(file).value();
  CHECK(drain(*owned) == "hello\n");
  const auto missing = host.open_user_file("/nonexistent/kern.log");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "/nonexistent/kern.log: No such file or directory");
  auto in = host.open_user_file("-");
  REQUIRE(in.ok());
  CHECK((*in)->name() == "stdin");
}

TEST_CASE("live: the kernel log is read without blocking, or its error is said") {
  const auto host = Host::live();
  auto opened = host.open_kernel_log();
  if (!opened.ok()) {
    // e.g. a container without CAP_SYSLOG: both ways are named with their reasons
    CHECK(opened.error().message.find("klogctl") != std::string::npos);
    return;
  }
  auto stream = std::move(opened).value();
  REQUIRE(stream != nullptr);
  CHECK((stream->name() == "/dev/kmsg" || stream->name() == "klogctl"));
  KernelLogScanner scanner;
  for (;;) { // ends at EAGAIN: the ring buffer is finite
    const auto room = scanner.room();
    auto n = stream->read(room.data(), room.size());
    REQUIRE(n.ok());
    if (*n == 0) {
      break;
    }
    scanner.commit(*n);
  }
  const auto facts = scanner.finish();
  CHECK(facts.ran);
}

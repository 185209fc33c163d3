// `snapshot --redact` end to end (ctest label security): the redacted snapshot of every fixture
// replays to the same verdict, findings (ids, severities, GPUs) and recommendation as the fixture
// itself, and a snapshot full of identifiers keeps none of them in any file.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

using namespace gpf::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What a replay must keep: the verdict and recommendation, each finding's id, severity and GPU,
// each GPU's place and usability, each probe's outcome. Messages and evidence quote the inputs,
// which redaction changes on purpose.
json outcome(const std::string& out) {
  const json j = json::parse(out);
  json o;
  for (const char* key :
       {"verdict", "exit_code", "cuda_visible_devices", "usable_gpus", "total_gpus"}) {
    o[key] = j.at(key);
  }
  // The job's own MIG entries are kept in the recommendation, so their UUIDs are pseudonyms in a
  // replay: compare how many there are, not their text.
  if (const std::string cvd = j.at("cuda_visible_devices"); cvd.find("MIG-") != std::string::npos) {
    o["cuda_visible_devices"] = j.at("recommended_gpus");
  }
  o["cuda_device_order"] = j.value("cuda_device_order", "");
  for (const auto& f : j.at("findings")) {
    o["findings"].push_back({f.at("id"), f.at("severity"), f.value("gpu", "")});
  }
  for (const auto& g : j.at("gpus")) {
    o["gpus"].push_back({g.at("index"), g.at("bus_id"), g.at("usable"), g.at("reasons").size()});
  }
  for (const auto& p : j.at("probes")) {
    o["probes"].push_back({p.at("name"), p.at("status")});
  }
  return o;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every byte of every file, every file name and every link target of a snapshot.
std::string everything_in(const fs::path& dir) {
  std::string all;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    all += e.path().string() + "\n";
    if (e.is_symlink()) {
      all += fs::read_symlink(e.path()).string() + "\n";
    } else if (e.is_regular_file()) {
      all += slurp(e.path()) + "\n";
    }
  }
  return all;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
}

} // namespace

TEST_CASE("security: a redacted snapshot of every fixture replays to the same findings") {
  for (const auto& name : sweep_fixtures()) {
    INFO(name);
    TempDir t;
    const auto dir = (t.path / "snap").string();
    const auto cap = run_preflight({"snapshot", "--redact", "--root", fixture(name), "-o", dir});
    REQUIRE(cap.exit_code == 0);
    const auto original = run_preflight({"--root", fixture(name), "--format", "json"});
    const auto replay = run_preflight({"--root", dir, "--format", "json"});
    CHECK(replay.exit_code == original.exit_code);
    CHECK(outcome(replay.out) == outcome(original.out));
  }
}

TEST_CASE("security: --redact leaves no host, user, address, serial or UUID in any file") {
  // A MIG host (topo-mig-unknown) with every kind of identifier added to the files it reads.
  TempDir src;
  fs::copy(fixture("topo-mig-unknown"), src.path,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const std::map<std::string, std::string> uuids{
      {"GPU-00000000-1111-2222-3333-444455550000", "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"},
      {"GPU-00000001-1111-2222-3333-444455550001", "GPU-8932f9e1-5b0a-4c33-9d1e-7a6b5c4d3e2f"},
  };
  for (const auto& e : fs::recursive_directory_iterator(src.path)) {
    if (e.is_regular_file() && !e.is_symlink()) {
      std::string text = slurp(e.path());
      for (const auto& [from, to] : uuids) {
        replace_all(text, from, to);
      }
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << text;
    }
  }
  const std::string gpu0 = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
  const std::string gpu1 = "GPU-8932f9e1-5b0a-4c33-9d1e-7a6b5c4d3e2f";
  src.write("environ", "CUDA_VISIBLE_DEVICES=GPU-8932f9e,MIG-" + gpu0 + "/1/0,MIG-" + gpu0 +
                           "/2/0\nPATH=/home/alice/bin:/usr/bin\nLD_LIBRARY_PATH=/home/alice/lib\n"
                           "USER=alice\nHOME=/home/alice\n");
  src.write("proc/sys/kernel/hostname", "node17.example.com\n");
  src.write(
      "proc/mounts",
      slurp(src.path / "proc/mounts") +
          "nas01.example.com:/export/home /home nfs4 rw,vers=4.2,addr=10.20.30.40,"
          "clientaddr=10.20.30.17 0 0\n//fs02/share /mnt/share cifs rw,addr=fd00::1234 0 0\n");
  src.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=UUID=0f3c ro quiet "
                            "ip=10.20.30.17::10.20.30.1:255.255.255.0:node17:eth0:off\n");
  src.write(
      "dmesg.txt",
      "Nov 30 02:00:00 node17 kernel: igb 0000:01:00.0 eth0: MAC 00:1b:21:3a:4f:5e\n"
      "Nov 30 02:00:01 node17 kernel: NFS: server nas01.example.com not responding\n"
      "Nov 30 02:00:02 node17 kernel: IPv6: eth0: address fe80::21b:21ff:fe3a:4f5e\n"
      "Nov 30 02:00:03 node17 kernel: NVRM: GPU at PCI:0000:2a:00: " +
          gpu1 +
          "\n"
          "Nov 30 02:00:03 node17 kernel: NVRM: GPU Board Serial Number: 1650923004512\n"
          "Nov 30 02:00:04 node17 kernel: NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', "
          "name=<unknown>, GPU has fallen off the bus.\n"
          "Nov 30 02:00:05 gpu-node-18 kernel: nfs: server fs02 OK, from 10.20.30.99\n"
          "Nov 30 02:00:06 node17 kernel: ib0: hw 80:00:00:48:fe:80:00:00:00:00:00:00:0c:42:a1:03:"
          "00:6b:c1:2e\n"
          "Nov 30 02:00:07 node17 kernel: NVRM: MIG-7c8bc2cd-ee5b-5a46-b8a7-0d5b4a1e6f9e created "
          "on node17.\n");

  TempDir out;
  const auto dir = out.path / "snap";
  const auto cap =
      run_preflight({"snapshot", "--redact", "--root", src.path.string(), "-o", dir.string()});
  REQUIRE(cap.exit_code == 0);

  const auto original = run_preflight({"--root", src.path.string(), "--format", "json"});
  const auto replay = run_preflight({"--root", dir.string(), "--format", "json"});
  const auto before = outcome(original.out);
  CHECK(outcome(replay.out) == before);
  // the identifiers were there to find: the Xid is pinned to the GPU the log line's UUID names
  CHECK(before.dump().find("0000:2a:00.0") != std::string::npos);
  CHECK(original.out.find("8932f937") != std::string::npos);

  const std::string all = everything_in(dir);
  for (const char* secret :
       {"node17", "nas01", "example.com", "fs02", "gpu-node-18", "10.20.30.", "fd00::1234", "alice",
        "00:1b:21:3a:4f:5e", "fe80::21b", "1650923004512", "8932f9", "d72c-4106", "5b0a-4c33",
        "7c8bc2cd", "80:00:00:48:fe:80"}) {
    INFO(secret);
    CHECK(all.find(secret) == std::string::npos);
  }
  // what the tokens look like, for the documentation's examples
  const std::string log = slurp(dir / "dmesg.txt");
  CHECK(log.find("Nov 30 02:00:00 host-1 kernel: igb 0000:01:00.0 eth0: MAC mac-1\n") !=
        std::string::npos);
  CHECK(log.find("NVRM: MIG-00000000-0000-0000-0000-000000000000 created on host-1.\n") !=
        std::string::npos);
  CHECK(slurp(dir / "environ").find("PATH=/home/user-1/bin:/usr/bin\n") != std::string::npos);
}

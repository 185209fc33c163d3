// The redactor of `snapshot --redact` on strings: each kind of identifier, whole tokens only,
// the same token for the same value, UUID pseudonyms the parsers still resolve, and inputs that
// once crashed a regular-expression engine (one token of a mebibyte).
#include "gpf/capture/redactor.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/text.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using gpf::Redactor;

namespace {

bool has(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("redactor: host names from syslog fields and learned names, numbered in order") {
  Redactor r({"node17.example"});
  const auto out = r.apply(
      "Nov 30 02:00:00 node17 kernel: NVRM: GPU Board Serial Number: 1650123456789\n"
      "Nov 30 02:00:01 node17 kernel: NVRM: GPU 0000:3b:00.0: GPU serial number is 1650123456789.\n"
      "Nov 30 02:00:02 other kernel: seen from node17.example\n"
      "2026-11-30T02:00:03+0000 other kernel: again node17.example.\n");
  CHECK(out ==
        "Nov 30 02:00:00 host-1 kernel: NVRM: GPU Board Serial Number: serial-1\n"
        "Nov 30 02:00:01 host-1 kernel: NVRM: GPU 0000:3b:00.0: GPU serial number is serial-1.\n"
        "Nov 30 02:00:02 host-2 kernel: seen from host-3\n"
        "2026-11-30T02:00:03+0000 host-2 kernel: again host-3.\n");
}

TEST_CASE("redactor: a learned host is replaced as a whole token only") {
  Redactor r({"node17"});
  CHECK(r.apply("node17\n") == "host-1\n"); // the hostname file
  CHECK(r.apply("up: node17, node17:22 [node17] user@node17") ==
        "up: host-1, host-1:22 [host-1] user@host-1");
  // a longer token that merely contains the name is another name
  CHECK(r.apply("node17-ib0 xnode17 node170 node17_x") == "node17-ib0 xnode17 node170 node17_x");
  // an unknown domain after a known short name: the first label goes
  CHECK(r.apply("node17.cluster.local") == "host-1.cluster.local");
  // no trailing newline is added, CR is kept
  CHECK(r.apply("a node17\r\nb") == "a host-1\r\nb");
}

TEST_CASE("redactor: a host name that is an ordinary word stays where it is vocabulary") {
  SECTION("nouveau") {
    Redactor r({"nouveau"});
    const std::string modules = "nouveau 2355200 0 - Live 0x0000000000000000\n"
                                "nvidia_uvm 1 0 - Live 0x0\n";
    CHECK(r.apply(modules) == modules);
    const std::string log = "[    5.100000] nouveau 0000:3b:00.0: unknown chipset\n"
                            "[    5.100001] nouveau: probe of 0000:3b:00.0 failed with error -12\n";
    CHECK(r.apply(log) == log);
    CHECK(r.apply("options nouveau modeset=0\nblacklist nouveau\n") ==
          "options nouveau modeset=0\nblacklist nouveau\n");
    CHECK(r.apply("nouveau.modeset=0 quiet") == "nouveau.modeset=0 quiet");
    // where it stands as the host name it goes
    CHECK(r.apply("Nov 30 02:00:00 nouveau kernel: nouveau: probe failed\n") ==
          "Nov 30 02:00:00 host-1 kernel: nouveau: probe failed\n");
    CHECK(r.apply("nouveau\n") == "host-1\n");
    CHECK(r.apply("root@nouveau nouveau:/export //nouveau/share") ==
          "root@host-1 host-1:/export //host-1/share");
  }
  SECTION("vm") {
    Redactor r({"vm"});
    const std::string cpuinfo =
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
        "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr vmx svm hypervisor\n"
        "vmx flags\t: vnmi preemption_timer\nbugs\t\t: spectre_v1\n";
    CHECK(r.apply(cpuinfo) == cpuinfo);
    CHECK(r.apply("vm\n") == "host-1\n");
  }
}

TEST_CASE("redactor: user names from /home paths, passwd lines and the environment") {
  Redactor r;
  r.learn_user("bob7");
  r.learn_user("root"); // a system account is nobody's secret and a word the inputs use
  CHECK(r.apply("PATH=/home/alice/bin:/usr/bin:/home/alice/.local/bin") ==
        "PATH=/home/user-1/bin:/usr/bin:/home/user-1/.local/bin");
  CHECK(r.apply("carol:x:1001:1001:Carol:/home/carol:/bin/bash") ==
        "user-2:x:1001:1001:Carol:/home/user-2:/bin/bash");
  CHECK(r.apply("started by bob7 as root") == "started by user-3 as root");
  // an ordinary-word user is replaced in its home path, not as a word elsewhere
  CHECK(r.apply("alice in wonderland") == "alice in wonderland");
  CHECK(r.apply("/root /home/root") == "/root /home/root");
}

TEST_CASE("redactor: learn() finds names in one text that apply() replaces in another") {
  Redactor r;
  r.learn("nas01.example.com:/export /home nfs4 rw,addr=10.20.30.40 0 0\n"
          "//fs02/share /mnt/share cifs rw 0 0\n"
          "Nov 30 02:00:00 gpu-node-3 kernel: hello\n"
          "dave:x:1002:1002::/home/dave:/bin/sh\n");
  // learned earlier, replaced in a file written before the one that showed them
  CHECK(r.apply("mounted from nas01.example.com and gpu-node-3; /home/dave") ==
        "mounted from host-1 and host-2; /home/user-1");
  CHECK(r.apply("fs02:/x") == "host-3:/x");
  // only a network filesystem's source is a server
  Redactor other;
  other.learn("https://repo.example/x\nsrv9:/x /y ext4 rw 0 0\n");
  CHECK(other.apply("https srv9 https://a.b") == "https srv9 https://a.b");
}

TEST_CASE("redactor: IPv4 and IPv6 addresses, not versions, times or PCI addresses") {
  Redactor r;
  CHECK(r.apply("addr=10.20.30.40,clientaddr=10.20.30.17 to 10.20.30.40:2049") ==
        "addr=ip-1,clientaddr=ip-2 to ip-1:2049");
  CHECK(r.apply("ip=10.0.0.17::10.0.0.1:255.255.255.0:host:eth0:off") ==
        "ip=ip-3::ip-4:ip-5:host:eth0:off");
  CHECK(r.apply("fe80::1%eth0 [2001:db8:0:0:0:0:0:1]:22 ::ffff:192.0.2.7 2001:DB8::A") ==
        "ip-6%eth0 [ip-7]:22 ip-8 ip-9");
  for (const std::string kept :
       {"Video BIOS: 96.00.89.00.01", "550.54.14", "1.2.3.4.5", "10.0.0.256", "v10.1.2.3",
        "Nov 30 02:00:00", "0000:3b:00.0", "5.15.153.1-microsoft-standard-WSL2", "PCI:0000:3b:00",
        "std::string", "a::b", "12:34:56.789", "deadbeef::cafe:1:2:3:4:5:6:7", "1:2:3:4:5:6:7",
        "::", "NVML 12.550.54.14"}) {
    INFO(kept);
    CHECK(r.apply(kept) == kept);
  }
}

TEST_CASE("redactor: hardware addresses") {
  Redactor r;
  CHECK(r.apply("link/ether 00:1b:21:3a:4f:5e brd ff:ff:ff:ff:ff:ff") ==
        "link/ether mac-1 brd mac-2");
  CHECK(r.apply("00:1B:21:3A:4F:5E 00-1b-21-3a-4f-5e") == "mac-1 mac-3");
  CHECK(r.apply("infiniband 80:00:00:48:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:6b:c1:2e") ==
        "infiniband mac-4");
  CHECK(r.apply("HWaddr:00:1b:21:3a:4f:5e: up") == "HWaddr:mac-1: up");
  for (const std::string kept : {"00:1b:21:3a:4f", "2026-11-30", "ab:00:1b:21:3a:4f:5e:12:34x",
                                 "0000:3b:00.0", "00:1b:21-3a:4f:5e"}) {
    INFO(kept);
    CHECK(r.apply(kept).find("mac-") == std::string::npos);
  }
}

TEST_CASE("redactor: serial numbers after the word serial") {
  Redactor r;
  CHECK(r.apply(R"({"serial": "PH1650923004512", "name": "x"})") ==
        R"({"serial": "serial-1", "name": "x"})");
  CHECK(r.apply("Serial Number: PH1650923004512 / serial no. 42-77") ==
        "Serial Number: serial-1 / serial no. serial-2");
  // no digit: a word, not a serial; "serial8250" is another word
  CHECK(r.apply("serial console enabled") == "serial console enabled");
  CHECK(r.apply("serial8250: ttyS0 at I/O 0x3f8") == "serial8250: ttyS0 at I/O 0x3f8");
}

TEST_CASE("redactor: GPU and MIG UUIDs keep their shape, prefixes and the GPU they name") {
  Redactor r;
  const std::string a = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
  const std::string b = "GPU-8932f9e1-0000-4106-c12f-20bd9faed9f6"; // shares 6 digits with a
  const std::string mig = "MIG-7c8bc2cd-ee5b-5a46-b8a7-0d5b4a1e6f9e";
  const auto out =
      r.apply("GPU UUID: " + a + "\nGPU UUID: " + b + "\nCUDA_VISIBLE_DEVICES=GPU-8932f937,MIG-" +
              a + "/1/0," + mig + "\nNVRM: GPU at PCI:0000:3b:00: " + a + "\n");
  const auto lines = gpf::split_lines(out);
  REQUIRE(lines.size() == 4);
  const std::string ra(lines[0].substr(10));
  const std::string rb(lines[1].substr(10));
  CHECK(ra == "GPU-00000000-0000-0000-0000-000000000000");
  CHECK(rb == "GPU-00000010-0000-0000-0000-000000000000");
  CHECK(lines[2] == "CUDA_VISIBLE_DEVICES=GPU-00000000,MIG-" + ra +
                        "/1/0,MIG-00000000-0000-0000-0000-000000000000");
  CHECK(lines[3] == "NVRM: GPU at PCI:0000:3b:00: " + ra);
  CHECK_FALSE(has(out, "8932f937"));
  CHECK_FALSE(has(out, "7c8bc2cd"));
  CHECK(r.apply(a + " " + a.substr(0, 10)) == ra + " " + ra.substr(0, 10)); // the same next time

  // The parsers resolve the pseudonyms exactly as they resolved the originals.
  const std::vector<gpf::GpuRef> gpus{{"0000:3b:00.0", ra}, {"0000:5d:00.0", rb}};
  const auto vd = gpf::parse_visible_devices(std::string(lines[2].substr(21)), gpus);
  REQUIRE(vd.entries.size() == 3);
  CHECK(vd.entries[0].second == "0000:3b:00.0"); // the redacted prefix still names only GPU a
  CHECK(vd.entries[1].second == "0000:3b:00.0"); // the MIG entry names its parent
  CHECK(vd.entries[2].second.empty()); // a MIG-<uuid>: its GPU is not in the name, as before
  CHECK(vd.ignored.empty());
  const auto ref = gpf::parse_mig_reference("MIG-" + ra + "/1/0");
  REQUIRE(ref);
  CHECK(ref->gpu_uuid == ra);
  // a prefix both GPUs share stays ambiguous, one only GPU b has stays b's
  CHECK(gpf::parse_visible_devices(r.apply("GPU-8932f9"), gpus).bus_ids.empty());
  CHECK(gpf::parse_visible_devices(r.apply("GPU-8932f9e"), gpus).bus_ids ==
        std::vector<std::string>{"0000:5d:00.0"});
  // upper case is the same UUID
  CHECK(r.apply("GPU-8932F937-D72C-4106-C12F-20BD9FAED9F6") == ra);
  // not UUIDs: words, too many digits, no digits
  for (const std::string kept : {"GPU-accelerated", "GPU-I: 2", "GPU-", "MIG-capable",
                                 "GPU-00000000111122223333444455556666777"}) {
    INFO(kept);
    CHECK(r.apply(kept) == kept);
  }
}

TEST_CASE("redactor: the same value gets the same token across texts, others a new one") {
  Redactor r({"node17"});
  const auto one = r.apply("node17 10.0.0.1 00:1b:21:3a:4f:5e serial 123A");
  const auto two = r.apply("serial 123A 00:1b:21:3a:4f:5e 10.0.0.1 node17 10.0.0.2");
  CHECK(one == "host-1 ip-1 mac-1 serial serial-1");
  CHECK(two == "serial serial-1 mac-1 ip-1 host-1 ip-2");
}

TEST_CASE("redactor: a mebibyte token, line or pathological run is scanned without a crash") {
  Redactor r({"node17"});
  r.learn_user("alice");
  const std::size_t mib = 1u << 20;
  for (const std::string& text :
       {std::string(mib, 'a'), std::string(mib, '1'), std::string(mib, ':'), std::string(mib, '.'),
        "GPU-" + std::string(mib, 'f'), "/home/" + std::string(mib, 'x'),
        "serial " + std::string(mib, '7'), std::string(mib, '-')}) {
    INFO(text.substr(0, 8));
    const auto out = r.apply(text);
    CHECK(out == text); // nothing in them is an identifier
    r.learn(text);
  }
  std::string mixed;
  while (mixed.size() < mib) {
    mixed += "1.2.3.4 fe80::a,00:1b:21:3a:4f:5e-GPU-0a node17 ";
  }
  const auto out = r.apply(mixed);
  CHECK_FALSE(has(out, "1.2.3.4"));
  CHECK_FALSE(has(out, "fe80::a"));
  CHECK_FALSE(has(out, "GPU-0a"));
  CHECK_FALSE(has(out, "node17 "));
  CHECK_FALSE(has(out, "00:1b:21:3a:4f:5e"));
}

TEST_CASE("redactor: fixture inputs without identifiers come out byte for byte") {
  // A host named like a word of these files changes none of them.
  for (const char* host : {"nouveau", "vm", "nvidia", "kernel", "Live"}) {
    Redactor r({host});
    for (const char* file :
         {"nouveau/proc/modules", "healthy-4gpu/proc/driver/nvidia/version",
          "log-xid79-one-of-8/proc/modules", "registry-keys/proc/driver/nvidia/registry"}) {
      INFO(host << " " << file);
      const auto text = slurp(std::string(GPF_FIXTURES_DIR) + "/" + file);
      REQUIRE_FALSE(text.empty());
      CHECK(r.apply(text) == text);
    }
  }
}

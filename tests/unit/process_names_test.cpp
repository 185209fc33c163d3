// Process names in the knowledge layer: comm's 15 bytes, and NVIDIA's daemons, each row sourced.
#include "gpf/knowledge/process_names.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

TEST_CASE("process names as the kernel keeps them (15 bytes)") {
  CHECK(comm_names("nv-fabricmanage\n", "nv-fabricmanager"));
  CHECK(comm_names("nvidia-persiste", "nvidia-persistenced"));
  CHECK(comm_names("systemd", "systemd"));
  CHECK_FALSE(comm_names("nv-fabricmanag", "nv-fabricmanager"));
  CHECK_FALSE(comm_names("nvidia-persistenced-x", "nvidia-persistenced"));
  CHECK_FALSE(comm_names("", ""));
}

TEST_CASE("NVIDIA's management daemons, as comm shows them (cut at 15 bytes), and nothing else") {
  CHECK(nvidia_management_daemon("nvidia-persiste\n"));
  CHECK(nvidia_management_daemon("nv-fabricmanage"));
  CHECK(nvidia_management_daemon("dcgm-exporter"));
  CHECK(nvidia_management_daemon("nv-hostengine"));
  CHECK(nvidia_management_daemon("nvidia-smi"));
  CHECK_FALSE(nvidia_management_daemon("python3"));
  CHECK_FALSE(nvidia_management_daemon("nvidia-smi-wrap"));
  for (const auto& d : nvidia_management_daemons()) {
    INFO(d.program);
    CHECK(d.source.rfind("https://", 0) == 0);
    CHECK_FALSE(d.what.empty());
  }
}

TEST_CASE("NVIDIA's management daemons by their installed executable, not by a name") {
  REQUIRE(nvidia_daemon_executable("/usr/bin/nvidia-persistenced"));
  CHECK(nvidia_daemon_executable("/usr/bin/nvidia-persistenced")->program == "nvidia-persistenced");
  CHECK(nvidia_daemon_executable("/usr/sbin/nv-fabricmanager (deleted)"));
  CHECK(nvidia_daemon_executable("/usr/bin/nv-hostengine"));
  CHECK(nvidia_daemon_executable("/usr/local/bin/dcgm-exporter"));
  CHECK_FALSE(nvidia_daemon_executable("/home/bob/bin/nvidia-persistenced"));
  CHECK_FALSE(nvidia_daemon_executable("/tmp/nvidia-smi"));
  CHECK_FALSE(nvidia_daemon_executable("/usr/bin/python3.11"));
  CHECK_FALSE(nvidia_daemon_executable("nvidia-smi"));
  CHECK_FALSE(nvidia_daemon_executable("/usr/bin/nvidia-smi-wrap"));
  CHECK_FALSE(nvidia_daemon_executable(""));
}

#pragma once
// Facts built in code for the tests of the CUDA rows: a host whose driver lists n healthy GPUs,
// the CUDA probe's results on them, and the assessment of all built-in rules.
#include "gpf/probes/parsers.hpp"
#include "gpf/rules/verdict.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace gpf::test::cuda_rule_facts {

inline NodeInfo char_node() {
  NodeInfo n;
  n.type = NodeType::char_device;
  n.mode = 0666;
  n.rw_access = true;
  return n;
}

inline std::string bus(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0000:%02x:00.0", i + 1);
  return buf;
}

inline std::string uuid(int i) {
  return "GPU-fa4ec0de-0000-4000-8000-00000000000" + std::to_string(i);
}

// A host whose driver lists n healthy GPUs.
inline Facts host(int n, const char* kernel = "6.8.0-45-generic") {
  Facts f;
  f.kernel = parse_kernel_release(kernel);
  f.driver.loaded = true;
  f.driver.version = Version::parse("550.54.14");
  f.driver.version_text = "550.54.14";
  f.driver.version_source = "proc/driver/nvidia/version";
  f.devices.push_back({"dev/nvidiactl", char_node()});
  f.devices.push_back({"dev/nvidia-uvm", char_node()});
  for (int i = 0; i < n; ++i) {
    GpuFacts g;
    g.bus_id = bus(i);
    g.uuid = uuid(i);
    g.model = "NVIDIA H100 80GB HBM3";
    g.device_minor = static_cast<unsigned>(i);
    f.gpus.push_back(g);
    f.devices.push_back({"dev/nvidia" + std::to_string(i), char_node()});
  }
  return f;
}

inline CudaStep step(const char* name, double ms, bool ok = true) {
  return {name, ok, false, ms, std::nullopt, "", ""};
}

// CUDA confirmed these driver GPUs (physical order given) and each passed.
inline void cuda_ok(Facts& f, std::vector<int> order) {
  CudaFacts& c = f.cuda;
  c.ran = true;
  c.source = "live";
  c.library = "libcuda.so.1";
  c.enumeration_complete = true;
  c.init = step("cuInit", 100);
  c.enumeration_steps = {step("load", 1), c.init};
  c.timeout_s = 30;
  for (std::size_t k = 0; k < order.size(); ++k) {
    CudaDevice d;
    d.index = static_cast<int>(k);
    d.bus_id = bus(order[k]);
    d.uuid = uuid(order[k]);
    d.name = "NVIDIA H100 80GB HBM3";
    d.steps = {step("cuInit", 100), step("primary_context", 150), step("alloc", 1)};
    d.derive_timing();
    d.usable = true;
    d.visible_as = *d.uuid;
    c.devices.push_back(d);
  }
}

inline void multi_ok(Facts& f) {
  f.cuda.multi_gpu_ran = true;
  f.cuda.multi_gpu_ok = true;
  for (const auto& d : f.cuda.devices) {
    f.cuda.multi_gpu_devices.push_back(d.index);
  }
  f.cuda.peers = {{0, 1, true, true, false, 3, "", std::nullopt, "", std::nullopt, ""}};
}

inline Assessment judge(const Facts& f, CvdForm form = CvdForm::index) {
  CheckOptions o;
  o.cvd_form = form;
  return assess(f, builtin_rules(), o);
}

inline std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) {
    s += e + "\n";
  }
  return s;
}

} // namespace gpf::test::cuda_rule_facts

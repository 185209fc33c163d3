#pragma once
// Facts built in code for the tests of the compatibility rows: a snapshot host with a kernel, a
// driver and GPU models, the CUDA version the job expects, and the findings of those rows.
#include "gpf/probes/parsers.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/rule_subset.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace gpf::test::compat_rule_facts {

inline Version v(const char* text) {
  return *Version::parse(text);
}

inline Facts host_with(const char* kernel, const char* driver, DriverFlavour flavour,
                       std::vector<const char*> models) {
  Facts f;
  f.kernel = parse_kernel_release(kernel);
  f.driver.loaded = true;
  f.driver.version = v(driver);
  f.driver.version_text = driver;
  f.driver.version_source = "proc/driver/nvidia/version";
  f.driver.flavour = flavour;
  f.driver.version_line = std::string("NVRM version: NVIDIA UNIX ") +
                          (flavour == DriverFlavour::open ? "Open Kernel Module for x86_64  "
                                                          : "x86_64 Kernel Module  ") +
                          driver;
  int i = 0;
  for (const char* model : models) {
    GpuFacts g;
    g.bus_id = "0000:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ":00.0";
    g.model = model;
    f.gpus.push_back(g);
    ++i;
  }
  f.compat.ran = true;
  f.compat.snapshot = true;
  return f;
}

inline void expect(Facts& f, const char* cuda) {
  f.compat.expected_cuda = ExpectedCuda{v(cuda), cuda, "--expect-cuda"};
}

// The findings with this id when the compatibility rows judge f.
inline std::vector<Finding> findings(const Facts& f, const std::string& id) {
  const auto a = assess(f, compat_rules(), CheckOptions{});
  std::vector<Finding> out;
  std::copy_if(a.findings.begin(), a.findings.end(), std::back_inserter(out),
               [&](const Finding& x) { return x.id == id; });
  return out;
}

} // namespace gpf::test::compat_rule_facts

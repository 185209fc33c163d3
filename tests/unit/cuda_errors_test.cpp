// CUDA's error table (src/knowledge/cuda_errors.cpp) against the code list written from CUDA's
// headers (tests/data/cuda-errors-<version>.tsv, scripts/extract-cuda-errors.py): every name and
// value of both enums, each row classified.
#include "gpf/knowledge/cuda_errors.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace gpf;

namespace {

using Code = std::tuple<std::string, int, std::string>; // enum, value, name

std::string list_path() {
  return std::string(GPF_SOURCE_DIR) + "/tests/data/cuda-errors-" +
         std::string(k_cuda_errors_version) + ".tsv";
}

std::vector<std::string> list_lines() {
  std::ifstream in(list_path());
  REQUIRE(in);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::set<Code> listed(const std::vector<std::string>& lines) {
  std::set<Code> out;
  for (const auto& line : lines) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream cols(line);
    std::string e;
    std::string value;
    std::string name;
    std::getline(cols, e, '\t');
    std::getline(cols, value, '\t');
    std::getline(cols, name, '\t');
    out.emplace(e, std::stoi(value), name);
  }
  return out;
}

std::set<Code> tabled() {
  std::set<Code> out;
  for (const auto& row : cuda_errors()) {
    if (!row.driver.empty()) {
      out.emplace("CUresult", row.value, std::string(row.driver));
    }
    if (!row.runtime.empty()) {
      out.emplace("cudaError_t", row.value, std::string(row.runtime));
    }
  }
  return out;
}

// One line per code the list and the table disagree on, naming it.
std::vector<std::string> differences(const std::set<Code>& list, const std::set<Code>& table) {
  std::vector<std::string> out;
  const auto name = [](const Code& c) {
    return std::get<0>(c) + " " + std::get<2>(c) + " = " + std::to_string(std::get<1>(c));
  };
  for (const auto& c : list) {
    if (table.count(c) == 0) {
      out.push_back("not in the table: " + name(c));
    }
  }
  for (const auto& c : table) {
    if (list.count(c) == 0) {
      out.push_back("not in the list: " + name(c));
    }
  }
  return out;
}

} // namespace

TEST_CASE("the CUDA error table holds every CUresult and cudaError_t of the list, no more") {
  const auto lines = list_lines();
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.front().rfind("# CUDA " + std::string(k_cuda_errors_version) + " ", 0) == 0);
  const auto list = listed(lines);
  CHECK(list.size() == 240); // 103 CUresult + 137 cudaError_t in CUDA 13.3
  for (const auto& d : differences(list, tabled())) {
    FAIL_CHECK(d);
  }
}

TEST_CASE("a code planted in the list fails the comparison, by name") {
  auto lines = list_lines();
  lines.push_back("CUresult\t919\tCUDA_ERROR_PLANTED");
  lines.push_back("cudaError_t\t46\tcudaErrorDevicesUnavailableRenamed");
  const auto d = differences(listed(lines), tabled());
  REQUIRE(d.size() == 2);
  CHECK(d[0] == "not in the table: CUresult CUDA_ERROR_PLANTED = 919");
  CHECK(d[1] == "not in the table: cudaError_t cudaErrorDevicesUnavailableRenamed = 46");
}

TEST_CASE("every CUDA error row is classified and says why") {
  int last = -1;
  for (const auto& row : cuda_errors()) {
    INFO(row.value << " " << row.driver << " " << row.runtime);
    CHECK(row.value > last); // sorted, one row per value
    last = row.value;
    CHECK_FALSE((row.driver.empty() && row.runtime.empty()));
    CHECK_FALSE(row.meaning.empty());
    const bool needs_detail =
        row.cls == CudaErrorClass::node || row.cls == CudaErrorClass::ambiguous;
    CHECK(row.detail.empty() != needs_detail); // node: its conditions; ambiguous: what tells
    CHECK(row.meaning.find("CUDA_ERROR_") == std::string_view::npos);
  }
  CHECK(find_cuda_error(0)->cls == CudaErrorClass::none);
}

TEST_CASE("CUDA errors are found by value and by either enum's name") {
  const CudaError* by_value = find_cuda_error(209);
  REQUIRE(by_value);
  CHECK(by_value->driver == "CUDA_ERROR_NO_BINARY_FOR_GPU");
  CHECK(by_value->runtime == "cudaErrorNoKernelImageForDevice");
  CHECK(by_value->cls == CudaErrorClass::job);
  CHECK(find_cuda_error(std::string_view("cudaErrorNoKernelImageForDevice")) == by_value);
  CHECK(find_cuda_error(std::string_view("CUDA_ERROR_NO_BINARY_FOR_GPU")) == by_value);
  // codes only one enum has
  CHECK(find_cuda_error(916)->runtime.empty());
  CHECK(find_cuda_error(std::string_view("CUDA_ERROR_KEY_ROTATION"))->value == 916);
  CHECK(find_cuda_error(35)->driver.empty());
  CHECK(find_cuda_error(std::string_view("cudaErrorInsufficientDriver"))->cls ==
        CudaErrorClass::node);
  CHECK(find_cuda_error(std::string_view("cudaErrorApiFailureBase"))->value == 10000);
  // the node's, the job's, either
  CHECK(find_cuda_error(802)->cls == CudaErrorClass::node);
  CHECK(find_cuda_error(std::string_view("CUDA_ERROR_ECC_UNCORRECTABLE"))->cls ==
        CudaErrorClass::node);
  CHECK(find_cuda_error(std::string_view("cudaErrorLaunchFailure"))->cls ==
        CudaErrorClass::ambiguous);
  // nothing for what neither enum has, nor for a near miss
  CHECK(find_cuda_error(11) == nullptr);
  CHECK(find_cuda_error(1000) == nullptr);
  CHECK(find_cuda_error(std::string_view("cuda_error_no_device")) == nullptr);
  CHECK(find_cuda_error(std::string_view("")) == nullptr);
  CHECK(cuda_error_class_word(CudaErrorClass::ambiguous) == "ambiguous");
}

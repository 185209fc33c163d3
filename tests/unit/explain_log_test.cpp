// explain-log's matcher and pattern table: every row has a real excerpt from a public report
// (tests/data/explain-log/fixtures.json) on which it names the expected rule; the job's own errors
// name none; generic words name nothing; the result does not depend on how the bytes arrive;
// long lines, invalid UTF-8 and case are handled.
#include "gpf/cli/explain_log.hpp"
#include "gpf/knowledge/cuda_errors.hpp"
#include "gpf/knowledge/log_patterns.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/util/text.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

using namespace gpf;

namespace {

const std::string k_dir = std::string(GPF_SOURCE_DIR) + "/tests/data/explain-log/";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json fixtures() {
  return nlohmann::json::parse(read_all(k_dir + "fixtures.json")).at("fixtures");
}

const LogMatch* match_of(const LogExplanation& ex, std::string_view pattern) {
  for (const auto& m : ex.matches) {
    if (m.pattern == pattern) {
      return &m;
    }
  }
  return nullptr;
}

// The parts of an explanation a reader sees, as one string (for comparisons).
std::string summary(const LogExplanation& ex) {
  std::string out = std::to_string(ex.lines) + "/" + std::to_string(ex.bytes) + "/" +
                    std::to_string(ex.lines_cut) + "\n";
  for (const auto& m : ex.matches) {
    out += m.pattern + "|" + std::to_string(m.line_number) + "|" + std::to_string(m.count) + "|" +
           m.line + "|";
    for (const auto& r : m.rules) {
      out += r + " ";
    }
    out += "\n";
  }
  return out;
}

} // namespace

TEST_CASE("explain-log: every fixture names its expected rule, the job's name none") {
  int node = 0;
  int job = 0;
  for (const auto& f : fixtures()) {
    const std::string file = f.at("file");
    INFO(file << " (" << f.at("url").get<std::string>() << ")");
    CHECK(starts_with(f.at("url").get<std::string>(), "https://"));
    const auto ex = explain_log_text(read_all(k_dir + file));
    const LogMatch* m = match_of(ex, f.at("pattern").get<std::string>());
    REQUIRE(m != nullptr);
    CHECK_FALSE(m->line.empty());
    if (f.at("cause") == "node") {
      ++node;
      CHECK(m->cause == LogCause::node);
      REQUIRE_FALSE(m->rules.empty());
      CHECK(m->rules.front() == f.at("rule").get<std::string>());
      CHECK(ex.node_cause());
    } else {
      ++job;
      CHECK(f.at("rule").is_null());
      CHECK(m->cause == LogCause::job);
      CHECK(m->rules.empty());
      CHECK_FALSE(ex.node_cause()); // nothing in a job-fault excerpt points at the node
    }
  }
  CHECK(node >= 15);
  CHECK(job >= 3);
}

TEST_CASE("explain-log: every pattern row has a fixture from a public report") {
  std::set<std::string> covered;
  for (const auto& f : fixtures()) {
    covered.insert(f.at("pattern").get<std::string>());
  }
  for (const auto& row : log_patterns()) {
    INFO(row.id);
    CHECK(covered.count(std::string(row.id)) == 1);
  }
}

TEST_CASE("explain-log: the pattern table is sourced data naming existing rules") {
  const auto rows = log_patterns();
  REQUIRE(rows.size() <= 64); // one bit per row in the matcher
  std::set<std::string_view> ids;
  const std::set<std::string> generic = {"error",        "cuda",       "nccl",
                                         "failed",       "gpu",        "warning",
                                         "runtimeerror", "cuda error", "unknown error"};
  for (const auto& row : rows) {
    INFO(row.id);
    CHECK(ids.insert(row.id).second);
    CHECK(find_log_pattern(row.id) == &row);
    CHECK(starts_with(row.source, "https://"));
    CHECK_FALSE(row.meaning.empty());
    int texts = 0;
    for (const auto text : row.texts) {
      if (text.empty()) {
        continue;
      }
      ++texts;
      // distinctive on its own: never a generic word, never short
      CHECK(text.size() >= 16);
      CHECK(generic.count(to_lower(text)) == 0);
    }
    CHECK(texts >= 1);
    std::istringstream rules{std::string(row.rules)};
    std::string id;
    int named = 0;
    while (rules >> id) {
      ++named;
      INFO(id);
      CHECK(find_rule(id) != nullptr);
    }
    CHECK((row.cause == LogCause::node ? named >= 1 : named == 0));
  }
  CHECK(find_log_pattern("no.such-row") == nullptr);
}

TEST_CASE("explain-log: a generic word names no node rule") {
  for (const std::string line :
       {"RuntimeError: CUDA error: unknown error", "error", "CUDA", "NCCL error",
        "ERROR: CUDA failed", "torch.distributed.DistBackendError: NCCL error in: ...",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        // NCCL's result name has many causes: the WARN line before it is what names one
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL "
        "version 2.14.3",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."}) {
    INFO(line);
    const auto ex = explain_log_text(line + "\n");
    CHECK(ex.matches.empty());
    CHECK_FALSE(ex.node_cause());
  }
}

TEST_CASE("explain-log: case, line numbers, repeats and the first row taking a line") {
  const auto ex = explain_log_text("start\n"
                                   "nvidia-smi: FAILED TO INITIALIZE NVML: DRIVER/LIBRARY VERSION "
                                   "MISMATCH\r\n"
                                   "again: Driver/library version mismatch\n"
                                   "system not yet initialized; CUDA out of memory. Tried to "
                                   "allocate 2 GiB\n");
  CHECK(ex.lines == 4);
  const LogMatch* m = match_of(ex, "nvml.driver-library-mismatch");
  REQUIRE(m != nullptr);
  CHECK(m->line_number == 2);
  CHECK(m->count == 2);
  CHECK(m->line.back() == 'H'); // the '\r' is not quoted
  // the line with two rows' texts goes to the first row only
  CHECK(match_of(ex, "cuda.system-not-ready") != nullptr);
  CHECK(match_of(ex, "job.cuda-out-of-memory") == nullptr);
  // node causes come before the job's own
  const auto mixed = explain_log_text("CUDA out of memory. Tried to allocate 1 GiB\n"
                                      "NCCL WARN Call to posix_fallocate failed : No space left\n");
  REQUIRE(mixed.matches.size() == 2);
  CHECK(mixed.matches[0].pattern == "nccl.shm-no-space");
  CHECK(mixed.matches[1].pattern == "job.cuda-out-of-memory");
  CHECK(mixed.node_cause());
}

TEST_CASE("explain-log: the result does not depend on how the bytes arrive") {
  for (const auto& f : fixtures()) {
    const std::string text = read_all(k_dir + f.at("file").get<std::string>());
    const std::string whole = summary(explain_log_text(text));
    for (const std::size_t chunk : {1, 2, 7, 64}) {
      LogExplainer e;
      for (std::size_t at = 0; at < text.size(); at += chunk) {
        e.feed(std::string_view(text).substr(at, chunk));
      }
      INFO(f.at("file").get<std::string>() << " in chunks of " << chunk);
      CHECK(summary(e.finish()) == whole);
    }
  }
}

TEST_CASE("explain-log: the more specific of two node rows on different lines comes first") {
  // JAX: cuInit's unknown error, then XLA's diagnosis of it (the driver versions differ)
  const auto ex = explain_log_text(read_all(k_dir + "jax-kernel-dso-mismatch.log"));
  REQUIRE(ex.matches.size() == 2);
  CHECK(ex.matches[0].pattern == "xla.kernel-dso-mismatch");
  CHECK(ex.matches[0].line_number == 2);
  CHECK(ex.matches[1].pattern == "cuda.unknown-init-error");
}

TEST_CASE("explain-log: long lines are cut at 64 KiB, quotes are short and valid UTF-8") {
  const std::string pattern = "no CUDA-capable device is detected";
  // found within the first 64 KiB of a long line; past it, not examined
  const auto early = explain_log_text(pattern + std::string(200 * 1024, 'x') + "\nnext\n");
  CHECK(early.lines == 2);
  CHECK(early.lines_cut == 1);
  REQUIRE(match_of(early, "cuda.no-device") != nullptr);
  CHECK(match_of(early, "cuda.no-device")->line.size() <= k_explain_quote_max + 8);
  const auto late = explain_log_text(std::string(100 * 1024, 'x') + pattern + "\n");
  CHECK(late.lines_cut == 1);
  CHECK(late.matches.empty());
  // the same cut whatever the chunking
  LogExplainer e;
  const std::string text = std::string(100 * 1024, 'x') + pattern + "\n" + pattern + "\n";
  for (std::size_t at = 0; at < text.size(); at += 4096) {
    e.feed(std::string_view(text).substr(at, 4096));
  }
  const auto chunked = e.finish();
  REQUIRE(match_of(chunked, "cuda.no-device") != nullptr);
  CHECK(match_of(chunked, "cuda.no-device")->line_number == 2);
  // invalid UTF-8 and NUL bytes around a match
  const auto bad = explain_log_text(std::string("\xff\xfe\0 ", 4) + pattern + "\xc3\n");
  REQUIRE(match_of(bad, "cuda.no-device") != nullptr);
  CHECK(to_valid_utf8(match_of(bad, "cuda.no-device")->line) ==
        match_of(bad, "cuda.no-device")->line);
  // repairing invalid bytes (each becomes a three-byte U+FFFD) does not break the cut
  const auto grown = explain_log_text(pattern + std::string(600, '\xff') + "\n");
  REQUIRE(match_of(grown, "cuda.no-device") != nullptr);
  const std::string& quoted = match_of(grown, "cuda.no-device")->line;
  CHECK(quoted.size() <= k_explain_quote_max + 8);
  CHECK(to_valid_utf8(quoted) == quoted);
  CHECK_THAT(quoted, Catch::EndsWith(" [...]"));
  // a last line without '\n' counts
  CHECK(explain_log_text(pattern).lines == 1);
  CHECK(explain_log_text(pattern).matches.size() == 1);
  CHECK(explain_log_text("").matches.empty());
}

TEST_CASE("explain-log: pasted kernel-log lines go through the kernel-log scanner") {
  const auto ex = explain_log_text(read_all(k_dir + "nvidia-smi-no-driver-nouveau.log"));
  const LogMatch* kernel = match_of(ex, "kernel-log");
  REQUIRE(kernel != nullptr);
  CHECK(kernel->rules == std::vector<std::string>{"driver.probe-not-called"});
  CHECK(contains(kernel->line, "probe routine was not called"));
  CHECK(kernel->line_number == 0);
  // kernel-log matches lead: the kernel names the condition itself
  CHECK(ex.matches.front().pattern == "kernel-log");
  // an application Xid is the job's own
  const auto app = explain_log_text(
      "[ 100.000000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics Exception\n");
  REQUIRE(match_of(app, "kernel-log") != nullptr);
  CHECK(match_of(app, "kernel-log")->cause == LogCause::job);
  CHECK_FALSE(app.node_cause());
}

// Lines from public reports naming a CUDA error no pattern row takes: the error's own row says
// whose it is. Sources, in order: jax-ml/jax#25002, NVIDIA/cudf-spark-jni#1745,
// nanoporetech/dorado#458, MIC-DKFZ/nnUNet#1519, chelsea0x3b/cudarc#253.
TEST_CASE("explain-log: a CUDA error named by itself is the node's, the job's or either") {
  struct Case {
    std::string line;
    LogCause cause;
    int code;
  };
  const Case cases[] = {
      {"E1120 10:59:55.894873   35984 pjrt_stream_executor_client.cc:3067] Execution of replica 0 "
       "failed: INTERNAL: Failed to retrieve branch_index value on stream 0x5583cca477e0: CUDA "
       "error: Could not synchronize CUDA stream: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory "
       "access was encountered.",
       LogCause::job, 700},
      {"========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch "
       "failure\" on CUDA API call to cudaFree.",
       LogCause::ambiguous, 719},
      {"[error] Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
       "calling NumCudaDevices() that might have already set an error? Error 805: MPS client "
       "failed to connect to the MPS control daemon or the MPS server",
       LogCause::node, 805},
      {"RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
       LogCause::node, 220},
      {"DriverError(CUDA_ERROR_INVALID_PTX, \"a PTX JIT compilation failed\")", LogCause::job, 218},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    const auto ex = explain_log_text("step 1\n" + c.line + "\n" + c.line + "\n");
    REQUIRE(ex.matches.size() == 1);
    const LogMatch& m = ex.matches.front();
    CHECK(m.pattern == "cuda-error");
    CHECK(m.cause == c.cause);
    CHECK(m.rules.empty()); // never a rule from the error's name alone
    CHECK(m.line_number == 2);
    CHECK(m.count == 2);
    const CudaError* e = find_cuda_error(c.code);
    REQUIRE(e != nullptr);
    CHECK_THAT(m.meaning, Catch::StartsWith("CUDA error " + std::to_string(c.code) + " (") &&
                              Catch::Contains(std::string(e->meaning)));
    CHECK(m.detail == e->detail); // node: its conditions; either: what tells
    CHECK(ex.node_cause() == (c.cause == LogCause::node));
  }
}

TEST_CASE("explain-log: a pattern row keeps its lines; a CUDA name is a whole identifier") {
  // the lines: the pattern rows take them, with their rules
  CHECK(explain_log_text("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or "
                         "unavailable\n")
            .matches.front()
            .pattern == "cuda.devices-unavailable");
  const auto image = explain_log_text("cudaErrorNoKernelImageForDevice\n");
  REQUIRE(image.matches.size() == 1);
  CHECK(image.matches.front().pattern == "job.no-kernel-image");
  const auto ecc = explain_log_text("failed: CUDA_ERROR_ECC_UNCORRECTABLE\n");
  REQUIRE(ecc.matches.size() == 1);
  CHECK(ecc.matches.front().pattern == "cuda.ecc-uncorrectable");
  CHECK_FALSE(ecc.matches.front().rules.empty());
  // a prefix, a longer name, a type name or another case names nothing
  for (const std::string line :
       {"cudaError_t err = cudaGetLastError();", "MY_CUDA_ERROR_NVLINK_UNCORRECTABLE",
        "CUDA_ERROR_NVLINK_UNCORRECTABLE_X", "cuda_error_nvlink_uncorrectable", "CUDA_ERROR_",
        "cudaErrorNvlink", "Error 805: MPS client failed"}) {
    INFO(line);
    CHECK(explain_log_text(line + "\n").matches.empty());
  }
  // two names on one line: the first is taken
  const auto two =
      explain_log_text("cudaErrorIllegalAddress then CUDA_ERROR_NVLINK_UNCORRECTABLE\n");
  REQUIRE(two.matches.size() == 1);
  CHECK(two.matches.front().meaning.find("700") != std::string::npos);
}

TEST_CASE("explain-log: the CUDA errors' printed texts are distinctive") {
  int printed = 0;
  for (const auto& e : cuda_errors()) {
    if (e.printed.empty()) {
      continue;
    }
    ++printed;
    INFO(e.printed);
    CHECK(e.printed.size() >= 24);
    CHECK(e.cls != CudaErrorClass::job); // kept only to find the node's
  }
  CHECK(printed >= 3);
}

TEST_CASE("explain-log: an NCCL WARN no row knows is named by its family and its node rules") {
  const std::string sockets =
      "n1:1:2 [0] misc/socket.cc:540 NCCL WARN NET/Socket : Connect to 10.0.0.1<1234> failed : "
      "Software caused connection abort";
  const std::string p2p =
      "n1:1:2 [1] transport/p2p.cc:200 NCCL WARN failed to peer with device 1(=1): 217 peer "
      "access is not supported between these two devices";
  const auto ex = explain_log_text("step 1\n" + sockets + "\n" + p2p + "\n" + sockets + "\n");
  REQUIRE(ex.matches.size() == 2);
  for (const auto& m : ex.matches) {
    INFO(m.pattern);
    // as the table's rows: the family's node rules are the causes to rule out (--check)
    CHECK(m.cause == LogCause::node);
    CHECK_FALSE(m.rules.empty());
    CHECK_THAT(m.source, Catch::StartsWith("https://github.com/NVIDIA/nccl/"));
  }
  const auto& s = ex.matches.front().pattern == "nccl-warn-sockets" ? ex.matches[0] : ex.matches[1];
  CHECK(s.pattern == "nccl-warn-sockets");
  CHECK(s.count == 2);
  CHECK(s.line_number == 2);
  CHECK_THAT(s.meaning, Catch::StartsWith("NCCL WARN of its sockets family") &&
                            Catch::Contains("a rank that failed first"));
  CHECK(ex.node_cause());
  // a WARN whose message starts with nothing the families know, and INFO lines: nothing
  CHECK(explain_log_text("n1:1:2 [0] NCCL WARN rank 3 saw NET/IB late\n"
                         "n1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n")
            .matches.empty());
}

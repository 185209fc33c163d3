// The compatibility matrix: every table parses, every row has a source, and the lookups hold at
// their boundaries (exactly at a minimum, one patch below, two-part and three-part versions).
#include "gpf/knowledge/data_age.hpp"
#include "gpf/knowledge/matrix.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using gpf::CudaDriverStatus;
using gpf::CudaTargetStatus;
using gpf::Matrix;
using gpf::Version;

namespace {

Version v(const char* text) {
  auto parsed = Version::parse(text);
  REQUIRE(parsed);
  return *parsed;
}

const Matrix& matrix() {
  return Matrix::get();
}

void require_sources(const std::vector<std::string>& keys, const std::string& where) {
  INFO(where);
  REQUIRE_FALSE(keys.empty());
  for (const auto& key : keys) {
    const auto* s = matrix().source(key);
    REQUIRE(s);
    CHECK(s->url.rfind("https://", 0) == 0);
    CHECK_FALSE(s->table.empty());
    CHECK_FALSE(s->status.empty());
  }
}

} // namespace

TEST_CASE("every embedded data file parses and every row has a source") {
  const auto& m = matrix();
  CHECK(m.toolkit_rows().size() == 60); // 9.0 ... 13.4, every update release of Table 3
  CHECK(m.minor_compat_rows().size() == 3);
  for (const auto& r : m.toolkit_rows()) {
    require_sources(r.sources, r.release);
  }
  for (const auto& r : m.minor_compat_rows()) {
    require_sources(r.sources, "minor " + std::to_string(r.cuda_major));
  }
  for (const auto& r : m.cuda_arch_rows()) {
    require_sources(r.sources, r.arch);
  }
  for (const auto& r : m.driver_arch_rows()) {
    require_sources(r.sources, r.arch);
  }
  for (const auto& r : m.kernel_floor_rows()) {
    require_sources(r.sources, "kernel floor " + r.kernel_floor_text);
  }
  for (const auto& r : m.branch_rows()) {
    require_sources(r.sources, "branch " + std::to_string(r.branch));
  }
  for (const auto& r : m.gpu_model_rows()) {
    require_sources(r.sources, r.names.front());
  }
}

TEST_CASE("the toolkit table runs from 9.0 to 13.4 and skips 12.7") {
  const auto& rows = matrix().toolkit_rows();
  CHECK(rows.front().release == "13.4 GA");
  CHECK(rows.back().release == "9.0 (9.0.76)");
  for (const auto& r : rows) {
    CHECK_FALSE((r.cuda.major() == 12 && r.cuda.minor() == 7));
  }
  CHECK_FALSE(matrix().toolkit_release(v("12.7")));
}

TEST_CASE("toolkit release lookup: two-part means GA, three-part means that update") {
  struct Case {
    const char* cuda;
    const char* release;
    const char* driver;
  };
  const Case cases[] = {
      {"12.4", "12.4 GA", "550.54.14"},
      {"12.4.0", "12.4 GA", "550.54.14"},
      {"12.4.1", "12.4 Update 1", "550.54.15"},
      {"12.4.2", "12.4 Update 1", "550.54.15"}, // newest release not above it
      {"12.8", "12.8 GA", "570.26"},
      {"12.8.1", "12.8 Update 1", "570.124.06"},
      {"13.2", "13.2 GA", "595.45.04"},
      {"11.0", "11.0.2 GA", "450.51.05"}, // GA, not the 11.0.1 RC
      {"11.0.1", "11.0.1 RC", "450.36.06"},
      {"11.0.221", "11.0.3 Update 1", "450.51.06"},
      {"10.1", "10.1 (10.1.105 and updates)", "418.39"},
      {"10.1.243", "10.1 (10.1.105 and updates)", "418.39"},
      {"10.2.0", "10.2.89", "440.33"}, // below every 10.2 row: its GA
      {"9.2.148", "9.2 Update 1 (9.2.148)", "396.37"},
      {"9.0", "9.0 (9.0.76)", "384.81"},
  };
  for (const auto& c : cases) {
    INFO(c.cuda);
    const auto* row = matrix().toolkit_release(v(c.cuda));
    REQUIRE(row);
    CHECK(row->release == c.release);
    CHECK(row->driver_text == c.driver);
  }
  CHECK_FALSE(matrix().toolkit_release(v("8.0")));
  CHECK_FALSE(matrix().toolkit_release(v("14.0")));
}

TEST_CASE("CUDA on a driver: toolkit driver, minor-version floor, too old") {
  struct Case {
    const char* cuda;
    const char* driver;
    CudaDriverStatus status;
  };
  const Case cases[] = {
      // exactly at the toolkit's driver; one patch below falls to minor-version compatibility
      {"12.4", "550.54.14", CudaDriverStatus::ok},
      {"12.4", "550.54.13", CudaDriverStatus::minor_version_compat},
      {"12.4.1", "550.54.15", CudaDriverStatus::ok},
      {"12.4.1", "550.54.14", CudaDriverStatus::minor_version_compat},
      {"12.8", "570.26", CudaDriverStatus::ok},                     // two-part driver
      {"12.8.1", "570.26", CudaDriverStatus::minor_version_compat}, // 570.26 < 570.124.06
      {"12.8.1", "570.124.06", CudaDriverStatus::ok},
      {"12.4", "535.104.05", CudaDriverStatus::minor_version_compat},
      // the 12.x floor 525.60.13: at it, one patch below
      {"12.9", "525.60.13", CudaDriverStatus::minor_version_compat},
      {"12.9", "525.60.12", CudaDriverStatus::too_old},
      {"12.1", "470.82.01", CudaDriverStatus::too_old},
      // the 11.x floor 450.80.02
      {"11.8", "450.80.02", CudaDriverStatus::minor_version_compat},
      {"11.8", "450.80.01", CudaDriverStatus::too_old},
      {"11.0", "450.51.05", CudaDriverStatus::ok},
      // the 13.x floor 580.65.06
      {"13.1", "580.65.06", CudaDriverStatus::minor_version_compat},
      {"13.1", "580.65.05", CudaDriverStatus::too_old},
      {"13.0", "575.57.08", CudaDriverStatus::too_old},
      {"13.0", "580.65.06", CudaDriverStatus::ok},
      // backward compatibility: a newer major's driver runs older toolkits
      {"11.4", "595.45.04", CudaDriverStatus::ok},
      {"12.4", "580.65.06", CudaDriverStatus::ok},
      // before CUDA 11 there is no minor-version compatibility
      {"10.2", "440.33", CudaDriverStatus::ok},
      {"10.2", "440.32", CudaDriverStatus::too_old},
      {"10.2", "418.39", CudaDriverStatus::too_old},
      // not in the table
      {"12.7", "560.35.05", CudaDriverStatus::unknown_release},
      {"12.7", "520.61.05", CudaDriverStatus::too_old},
      {"14.0", "595.45.04", CudaDriverStatus::unknown_major},
  };
  for (const auto& c : cases) {
    INFO(c.cuda << " on " << c.driver);
    CHECK(matrix().judge_cuda_on_driver(v(c.cuda), v(c.driver)).status == c.status);
  }
}

TEST_CASE("minor-version floors per CUDA major") {
  REQUIRE(matrix().minor_compat(11));
  CHECK(matrix().minor_compat(11)->floor_text == "450.80.02");
  CHECK(matrix().minor_compat(12)->floor_text == "525.60.13");
  CHECK(matrix().minor_compat(13)->floor_text == "580.65.06");
  CHECK(*matrix().minor_compat(12)->branch_max_exclusive == 580);
  CHECK_FALSE(matrix().minor_compat(10));
}

TEST_CASE("the newest toolkit a driver runs") {
  struct Case {
    const char* driver;
    const char* release;
  };
  const Case cases[] = {
      {"550.54.14", "12.4 GA"},        {"550.54.13", "12.3 Update 1"},
      {"535.104.05", "12.2 Update 2"}, {"470.82.01", "11.4 Update 4"},
      {"570.26", "12.8 GA"},           {"570.124.06", "12.8 Update 1"},
      {"580.65.06", "13.0 GA"},        {"595.45.04", "13.2 GA"},
      {"384.81", "9.0 (9.0.76)"},
  };
  for (const auto& c : cases) {
    INFO(c.driver);
    const auto* row = matrix().newest_toolkit_for_driver(v(c.driver));
    REQUIRE(row);
    CHECK(row->release == c.release);
  }
  CHECK_FALSE(matrix().newest_toolkit_for_driver(v("384.80")));
}

TEST_CASE("which toolkits target a compute capability") {
  struct Case {
    const char* cuda;
    const char* cc;
    CudaTargetStatus status;
  };
  const Case cases[] = {
      {"12.9", "7.0", CudaTargetStatus::targeted}, // Volta's last toolkit
      {"13.0", "7.0", CudaTargetStatus::dropped},  // exactly at its removal
      {"13.0.2", "7.0", CudaTargetStatus::dropped},
      {"12.9.1", "6.1", CudaTargetStatus::targeted},
      {"13.0", "7.5", CudaTargetStatus::targeted}, // 13.0 keeps Turing
      {"13.0", "5.2", CudaTargetStatus::dropped},
      {"11.8", "3.7", CudaTargetStatus::targeted},
      {"12.0", "3.5", CudaTargetStatus::dropped},
      {"11.0", "3.0", CudaTargetStatus::dropped},
      {"10.2", "3.0", CudaTargetStatus::targeted},
      {"11.8", "9.0", CudaTargetStatus::targeted}, // Hopper's first toolkit
      {"11.7", "9.0", CudaTargetStatus::not_yet},
      {"11.7.1", "9.0", CudaTargetStatus::not_yet},
      {"12.8", "10.0", CudaTargetStatus::targeted},
      {"12.6", "10.0", CudaTargetStatus::not_yet},
      {"12.9", "10.3", CudaTargetStatus::targeted},
      {"12.8", "10.3", CudaTargetStatus::not_yet},
      {"11.0", "8.0", CudaTargetStatus::targeted},
      {"11.0", "8.6", CudaTargetStatus::not_yet},
      {"12.9", "10.1", CudaTargetStatus::targeted},
      {"13.0", "10.1", CudaTargetStatus::dropped}, // renamed 11.0
      {"13.0", "11.0", CudaTargetStatus::targeted},
      {"12.4", "8.8", CudaTargetStatus::unknown},
  };
  for (const auto& c : cases) {
    INFO(c.cuda << " for sm " << c.cc);
    CHECK(matrix().judge_cuda_targets(v(c.cuda), v(c.cc)).status == c.status);
  }
}

TEST_CASE("driver facts per architecture") {
  const auto* volta = matrix().driver_arch(v("7.0"));
  REQUIRE(volta);
  CHECK_FALSE(volta->open_module);
  CHECK(*volta->last_branch == 580);
  const auto* turing = matrix().driver_arch(v("7.5"));
  REQUIRE(turing);
  CHECK(turing->open_module);
  CHECK_FALSE(turing->needs_open_module);
  CHECK(*matrix().driver_arch(v("3.7"))->last_branch == 470);
  CHECK(*matrix().driver_arch(v("3.0"))->last_branch == 470);
  CHECK(*matrix().driver_arch(v("9.0"))->min_branch == 520);
  CHECK(*matrix().driver_arch(v("8.9"))->min_branch == 520);
  CHECK_FALSE(matrix().driver_arch(v("8.6"))->min_branch);
  const auto* b200 = matrix().driver_arch(v("10.0"));
  REQUIRE(b200);
  CHECK(b200->needs_open_module);
  CHECK(*b200->min_branch == 570);
  CHECK(*matrix().driver_arch(v("10.3"))->min_branch == 580);
  CHECK(*matrix().driver_arch(v("12.0"))->min_branch == 570);
  // Blackwell GeForce and workstation GPUs need the open kernel modules (the 2026 data)
  CHECK(matrix().driver_arch(v("12.0"))->needs_open_module);
  CHECK_FALSE(matrix().driver_arch(v("11.0"))); // Jetson Thor: another driver stack
}

TEST_CASE("kernel floor per driver branch") {
  CHECK_FALSE(matrix().kernel_floor(470));
  CHECK_FALSE(matrix().kernel_floor(514));
  REQUIRE(matrix().kernel_floor(515));
  CHECK(matrix().kernel_floor(515)->kernel_floor_text == "3.10");
  CHECK(matrix().kernel_floor(550)->kernel_floor_text == "3.10");
  CHECK(matrix().kernel_floor(555)->kernel_floor_text == "4.15");
  CHECK(matrix().kernel_floor(595)->kernel_floor_text == "4.15");
  const auto floor = matrix().kernel_floor(555)->kernel_floor;
  CHECK(v("4.15") >= floor);
  CHECK(v("4.15.0") >= floor);
  CHECK(v("4.14.336") < floor);
  CHECK(v("4.18.0") >= floor);
  CHECK(v("3.10.0") < floor);
  CHECK(v("3.10.0") >= matrix().kernel_floor(550)->kernel_floor);
  CHECK(v("3.9.11") < matrix().kernel_floor(550)->kernel_floor);
}

TEST_CASE("driver branch end of life is judged after its month") {
  using namespace std::chrono;
  const auto* r535 = matrix().branch(535);
  REQUIRE(r535);
  CHECK(r535->end_of_life_text == "2026-06");
  CHECK_FALSE(gpf::past_end_of_life(*r535, year(2026) / June / 30));
  CHECK(gpf::past_end_of_life(*r535, year(2026) / July / 1));
  CHECK_FALSE(gpf::past_end_of_life(*matrix().branch(580), year(2028) / June / 1));
  // a New Feature Branch has no end of life in NVIDIA's lifecycle from R610 on
  CHECK_FALSE(gpf::past_end_of_life(*matrix().branch(610), year(2026) / September / 1));
  CHECK_FALSE(matrix().branch(550));
  CHECK_FALSE(matrix().branch(470)->maintained);
  CHECK_FALSE(gpf::past_end_of_life(*matrix().branch(470), year(2030) / January / 1)); // no date
}

TEST_CASE("GPU model names map to architectures - every example matches its own row") {
  for (const auto& row : matrix().gpu_model_rows()) {
    for (const auto& example : row.examples) {
      INFO(example << " should match the row of " << row.names.front());
      const auto* found = matrix().gpu_model(example);
      REQUIRE(found);
      CHECK(found == &row);
    }
  }
  struct Case {
    const char* model;
    const char* cc;
  };
  const Case cases[] = {
      {"Tesla V100-SXM2-32GB", "7.0"},
      {"NVIDIA A100-SXM4-40GB", "8.0"},
      {"NVIDIA A10", "8.6"},
      {"NVIDIA H100 80GB HBM3", "9.0"},
      {"NVIDIA GeForce RTX 4090", "8.9"},
      {"Tesla T4", "7.5"},
      {"tesla p100-pcie-16gb", "6.0"},
      {"Tesla K80", "3.7"},
      {"NVIDIA B200", "10.0"},
      {"Quadro P4000", ""},
      {"NVIDIA RTX A2000", "8.6"},
      {"Some Future GPU", ""},
      {"NVIDIA A2000", ""},
      {"Tesla V1000", ""},
      {"NVIDIA RTX 6000 Ada Generation", "8.9"},
      {"Quadro RTX 6000", "7.5"},
      {"Tesla K40m", "3.5"},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", "8.9"},
  };
  for (const auto& c : cases) {
    INFO(c.model);
    const auto* row = matrix().gpu_model(c.model);
    if (std::string(c.cc).empty()) {
      CHECK_FALSE(row);
    } else {
      REQUIRE(row);
      CHECK(row->cc == v(c.cc));
    }
  }
  CHECK(matrix().gpu_model("NVIDIA GH200 480GB")->needs_open_module);
  CHECK(*matrix().gpu_model("NVIDIA B300")->min_branch == 580);
  CHECK(matrix().gpu_model("NVIDIA GeForce RTX 3090")->segment == "geforce");
}

TEST_CASE("cuDriverGetVersion numbers") {
  CHECK(v("12.4").cuda_number() == 12040);
  CHECK(v("9.2").cuda_number() == 9020);
  CHECK(gpf::Version::from_cuda_number(13000) == v("13.0"));
  CHECK(gpf::Version::from_cuda_number(12090) == v("12.9"));
}

// The data files as the generator reads them (name -> text), read once from data/.
const std::vector<gpf::EmbeddedFile>& data_texts() {
  static const auto texts = [] {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& entry : std::filesystem::directory_iterator(GPF_SOURCE_DIR "/data")) {
      if (entry.path().extension() == ".json") {
        std::ifstream in(entry.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        files.emplace_back(entry.path().filename().string(), text.str());
      }
    }
    return files;
  }();
  static const auto views = [] {
    std::vector<gpf::EmbeddedFile> v;
    for (const auto& [name, text] : texts) {
      v.push_back({name, text});
    }
    return v;
  }();
  return views;
}

TEST_CASE("the compiled tables are the rows of data/*.json") {
  const Matrix loaded = Matrix::load(data_texts());
  const Matrix& compiled = matrix();
  REQUIRE(compiled.toolkit_rows().size() == loaded.toolkit_rows().size());
  for (std::size_t i = 0; i < loaded.toolkit_rows().size(); ++i) {
    const auto& a = compiled.toolkit_rows()[i];
    const auto& b = loaded.toolkit_rows()[i];
    CHECK(a.release == b.release);
    CHECK(a.cuda == b.cuda);
    CHECK(a.driver == b.driver);
    CHECK(a.sources == b.sources);
  }
  CHECK(compiled.minor_compat_rows().size() == loaded.minor_compat_rows().size());
  CHECK(compiled.cuda_arch_rows().size() == loaded.cuda_arch_rows().size());
  CHECK(compiled.driver_arch_rows().size() == loaded.driver_arch_rows().size());
  CHECK(compiled.kernel_floor_rows().size() == loaded.kernel_floor_rows().size());
  REQUIRE(compiled.branch_rows().size() == loaded.branch_rows().size());
  for (std::size_t i = 0; i < loaded.branch_rows().size(); ++i) {
    CHECK(compiled.branch_rows()[i].end_of_life == loaded.branch_rows()[i].end_of_life);
    CHECK(compiled.branch_rows()[i].designation == loaded.branch_rows()[i].designation);
  }
  REQUIRE(compiled.gpu_model_rows().size() == loaded.gpu_model_rows().size());
  for (std::size_t i = 0; i < loaded.gpu_model_rows().size(); ++i) {
    CHECK(compiled.gpu_model_rows()[i].words == loaded.gpu_model_rows()[i].words);
    CHECK(compiled.gpu_model_rows()[i].note == loaded.gpu_model_rows()[i].note);
  }
  CHECK(compiled.pci_ids().release == loaded.pci_ids().release);
  CHECK(compiled.pci_ids().released == loaded.pci_ids().released);
  REQUIRE(compiled.pci_ids().rows.size() == loaded.pci_ids().rows.size());
  for (std::size_t i = 0; i < loaded.pci_ids().rows.size(); ++i) {
    CHECK(compiled.pci_ids().rows[i].id == loaded.pci_ids().rows[i].id);
    CHECK(compiled.pci_ids().rows[i].name == loaded.pci_ids().rows[i].name);
  }
  REQUIRE(compiled.sources().size() == loaded.sources().size());
  for (const auto& [key, s] : loaded.sources()) {
    REQUIRE(compiled.source(key));
    CHECK(compiled.source(key)->table == s.table);
    CHECK(compiled.source(key)->url == s.url);
  }
}

TEST_CASE("malformed data is rejected with the file, row and field") {
  auto load_with = [](std::string_view name, std::string_view text) {
    const auto& texts = data_texts();
    std::vector<gpf::EmbeddedFile> files(texts.begin(), texts.end());
    for (auto& f : files) {
      if (f.name == name) {
        f.text = text;
      }
    }
    return Matrix::load(files);
  };
  const std::string src =
      R"("sources": {"s": {"url": "https://x", "table": "t", "facts": "f", "status": "VERIFIED-DOC"}})";
  CHECK_THROWS_WITH(load_with("driver_branches.json", "{"),
                    Catch::Contains("driver_branches.json"));
  CHECK_THROWS_WITH(load_with("driver_branches.json",
                              "{" + src + R"(, "rows": [{"branch": 535, "designation": "LTSB",
      "end_of_life": "2026-13", "maintained": true, "max_cuda_major": 12, "source": "s"}]})"),
                    Catch::Contains("rows[0].end_of_life"));
  CHECK_THROWS_WITH(load_with("cuda_minor_compat.json",
                              "{" + src + R"(, "rows": [{"cuda_major": 12, "branch_min": 525,
      "branch_max_exclusive": 580, "floor": "525.60.13"}]})"),
                    Catch::Contains("missing field \"source\""));
  CHECK_THROWS_WITH(load_with("cuda_minor_compat.json",
                              "{" + src + R"(, "rows": [{"cuda_major": 12, "branch_min": 525,
      "branch_max_exclusive": 580, "floor": "525.60.13", "source": "nope"}]})"),
                    Catch::Contains("\"nope\" is not in this file's sources"));
  CHECK_THROWS_WITH(load_with("cuda_toolkit_driver.json",
                              "{" + src + R"(, "rows": [{"release": "x", "cuda": "12..4",
      "kind": "ga", "driver": "550", "source": "s"}]})"),
                    Catch::Contains("rows[0].cuda"));
  CHECK_THROWS_WITH(
      load_with("gpu_models.json",
                "{" + src + R"(, "rows": [{"names": ["--"], "examples": ["x"], "arch": "a",
      "cc": "7.0", "segment": "datacenter", "needs_open_module": false, "min_branch": null, "source": "s"}]})"),
      Catch::Contains("rows[0].names"));
  const std::string pci =
      "{" + src + R"(, "release": "595.45.04", "released": "2026-03", "rows": )";
  CHECK_THROWS_WITH(
      load_with("gpu_pci_ids.json", pci + R"([{"id": "2b85", "name": "x", "source": "s"}]})"),
      Catch::Contains("gpu_pci_ids.json: rows[0].id"));
  CHECK_THROWS_WITH(load_with("gpu_pci_ids.json", pci + R"([{"id": "2B85", "name": "x",
      "source": "s"}, {"id": "2B85", "name": "y", "source": "s"}]})"),
                    Catch::Contains("rows[1].id") && Catch::Contains("ascending"));
  CHECK_THROWS_WITH(load_with("gpu_pci_ids.json", "{" + src + R"(, "released": "2026-03",
      "rows": [{"id": "2B85", "name": "x", "source": "s"}]})"),
                    Catch::Contains("missing field \"release\""));
}

TEST_CASE("PCI device ids: the open modules' table of one release, ascending") {
  const auto& table = matrix().pci_ids();
  CHECK(table.release == "595.45.04");
  const auto row = [&](unsigned id) -> const gpf::PciIdRow* {
    for (const auto& r : table.rows) {
      if (r.id == id) {
        return &r;
      }
    }
    return nullptr;
  };
  REQUIRE(row(0x2330));
  CHECK(row(0x2330)->name == "NVIDIA H100 80GB HBM3");
  CHECK(table.rows.front().id == 0x1E02); // Turing's TITAN RTX: the open modules start there
  CHECK(row(0x1DB6) == nullptr);          // a Volta V100: older than the open modules' table
  CHECK(table.rows.back().id == 0x31C2);  // GB300, the newest in 595.45.04's table
  CHECK(gpf::pci_id_newer_than_data(0x31C3));
  CHECK_FALSE(gpf::pci_id_newer_than_data(0x31C2));
  CHECK_FALSE(gpf::pci_id_newer_than_data(0x1DB6)); // missing below the highest: not newer
}

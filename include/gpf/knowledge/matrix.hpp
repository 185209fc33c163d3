#pragma once
// The kernel / driver / CUDA / GPU-architecture compatibility matrix: the tables of data/*.json
// as typed rows, with lookups. tools/matrix_gen validates data/*.json at build time and compiles it
// into C++ tables (matrix_tables.cpp in the build tree), so a check parses no JSON for it. Every
// version comparison is numeric per component (gpf::Version: 570.26 < 570.124.06), never textual.
// Each row names its sources (docs/sources.md gathers them).
#include "gpf/util/version.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// One data file of the matrix as text: what Matrix::load reads (the generator and tests).
struct EmbeddedFile {
  std::string_view name; // "cuda_toolkit_driver.json"
  std::string_view text;
};

// Where a row's facts come from: a URL and the table on that page.
struct DataSource {
  std::string key;
  std::string url;
  std::string table;
  std::string facts;  // which facts of the page the row relies on, or why it has none
  std::string status; // VERIFIED-DOC, VERIFIED-SRC, OBSERVED, ...
};

// CUDA toolkit release -> the driver it ships with ("Toolkit Driver Version").
struct CudaDriverRow {
  std::string release; // "12.4 Update 1"
  Version cuda;        // 12.4.1
  std::string kind;    // "ga", "update", "rc"
  Version driver;      // 550.54.15
  std::string driver_text;
  std::vector<std::string> sources;
};

// Minor-version compatibility floor of a CUDA major (11 and later).
struct MinorCompatRow {
  unsigned long cuda_major = 0;
  unsigned long branch_min = 0;
  std::optional<unsigned long> branch_max_exclusive;
  Version floor; // the precise lowest driver
  std::string floor_text;
  std::vector<std::string> sources;
};

// Compute capabilities -> the toolkits that target them.
struct CudaArchRow {
  std::string arch;
  std::vector<Version> ccs;
  std::optional<Version> first_cuda; // nullopt: before this table (older than CUDA 7.0)
  std::optional<Version> last_cuda;  // nullopt: still targeted
  std::optional<Version> removed_in; // first toolkit that no longer targets it
  std::string note;
  std::vector<std::string> sources;
};

// Driver facts per architecture (compute-capability range).
struct DriverArchRow {
  std::string arch;
  Version cc_min;
  Version cc_max;
  bool open_module = true;        // the open kernel module can drive it
  bool needs_open_module = false; // the proprietary module cannot
  std::optional<unsigned long> min_branch;
  std::optional<unsigned long> last_branch;
  std::vector<std::string> sources;
};

// Driver branches -> the oldest supported kernel.
struct KernelFloorRow {
  unsigned long branch_first = 0;
  std::optional<unsigned long> branch_last; // nullopt: and every later branch
  Version kernel_floor;
  std::string kernel_floor_text;
  std::string hard_floor;
  std::string note;
  std::vector<std::string> sources;
};

// Driver branch lifecycle.
struct BranchRow {
  unsigned long branch = 0;
  std::string designation;
  std::optional<std::chrono::year_month> end_of_life;
  std::string end_of_life_text; // "2026-06"
  bool maintained = true;
  std::optional<unsigned long> max_cuda_major;
  std::vector<std::string> sources;
};

// GPU model name -> architecture and compute capability.
struct GpuModelRow {
  std::vector<std::string> names;              // as written in the data ("RTX 4090", "V100")
  std::vector<std::vector<std::string>> words; // each name split into upper-case words
  std::vector<std::string> examples;
  std::string arch;
  Version cc;
  std::string segment; // datacenter, workstation, geforce
  bool needs_open_module = false;
  std::optional<unsigned long> min_branch;
  std::string note;
  std::vector<std::string> sources;
};

// A PCI device id of the GPUs one driver release's open modules support (data/gpu_pci_ids.json).
struct PciIdRow {
  unsigned id = 0;  // the PCI device id (vendor 10de)
  std::string name; // the first product name the release's table gives it
  std::vector<std::string> sources;
};

// The release whose table data/gpu_pci_ids.json holds.
struct PciIdTable {
  std::string release;        // "595.45.04"
  std::string released;       // "2026-03"
  std::vector<PciIdRow> rows; // ascending by id
};

enum class CudaDriverStatus {
  ok,                   // driver >= the toolkit's own driver
  minor_version_compat, // >= the major's floor, < the toolkit's driver
  too_old,              // below the floor (or, before CUDA 11, below the toolkit's driver)
  unknown_release,      // the major's floor is met, but the release is not in the table
  unknown_major,        // neither the release nor its major is in the table
};

struct CudaDriverJudgement {
  CudaDriverStatus status = CudaDriverStatus::unknown_major;
  const CudaDriverRow* toolkit = nullptr; // the release the version stands for
  const MinorCompatRow* floor = nullptr;  // its major's minor-version floor
};

enum class CudaTargetStatus { targeted, not_yet, dropped, unknown };

struct CudaTargetJudgement {
  CudaTargetStatus status = CudaTargetStatus::unknown;
  const CudaArchRow* row = nullptr;
};

class Matrix {
public:
  // The tables compiled in at build time (built on first use; no parsing, cannot fail).
  static const Matrix& get();
  // Parses and validates data files (name -> JSON text): the build-time generator and tests only,
  // in the gpf_matrix_load library. Throws std::runtime_error naming the file, the row and the
  // field.
  static Matrix load(std::span<const EmbeddedFile> files);

  // The toolkit release a version stands for: X.Y -> that minor's GA release; X.Y.Z -> the
  // release with that version, else the newest release of X.Y not above it, else X.Y's GA.
  const CudaDriverRow* toolkit_release(const Version& cuda) const;
  const MinorCompatRow* minor_compat(unsigned long cuda_major) const;
  // Can a job built with CUDA `cuda` run on driver `driver`?
  CudaDriverJudgement judge_cuda_on_driver(const Version& cuda, const Version& driver) const;
  // The newest toolkit release whose driver is at or below `driver` (the driver's CUDA maximum).
  const CudaDriverRow* newest_toolkit_for_driver(const Version& driver) const;

  const CudaArchRow* cuda_arch(const Version& cc) const;
  // Does a toolkit (major.minor counts) target a compute capability?
  CudaTargetJudgement judge_cuda_targets(const Version& cuda, const Version& cc) const;

  const DriverArchRow* driver_arch(const Version& cc) const;
  const KernelFloorRow* kernel_floor(unsigned long branch) const;
  const BranchRow* branch(unsigned long branch) const;
  // The first model row one of whose names occurs in `model` as whole words (case-insensitive).
  const GpuModelRow* gpu_model(std::string_view model) const;

  // "<table> (<url>)" for each key, joined with "; ". Unknown keys are named as such.
  std::string cite(const std::vector<std::string>& keys) const;
  const DataSource* source(std::string_view key) const;
  // True when every key names a source whose status starts with VERIFIED (an UNVERIFIED or
  // OBSERVED row, or an unknown key, is not).
  bool verified(const std::vector<std::string>& keys) const;

  const std::vector<CudaDriverRow>& toolkit_rows() const { return m_toolkits; }
  const std::vector<MinorCompatRow>& minor_compat_rows() const { return m_minor; }
  const std::vector<CudaArchRow>& cuda_arch_rows() const { return m_cuda_archs; }
  const std::vector<DriverArchRow>& driver_arch_rows() const { return m_driver_archs; }
  const std::vector<KernelFloorRow>& kernel_floor_rows() const { return m_kernel_floors; }
  const std::vector<BranchRow>& branch_rows() const { return m_branches; }
  const std::vector<GpuModelRow>& gpu_model_rows() const { return m_models; }
  const PciIdTable& pci_ids() const { return m_pci_ids; }
  const std::map<std::string, DataSource, std::less<>>& sources() const { return m_sources; }

private:
  std::vector<CudaDriverRow> m_toolkits;
  std::vector<MinorCompatRow> m_minor;
  std::vector<CudaArchRow> m_cuda_archs;
  std::vector<DriverArchRow> m_driver_archs;
  std::vector<KernelFloorRow> m_kernel_floors;
  std::vector<BranchRow> m_branches;
  std::vector<GpuModelRow> m_models;
  PciIdTable m_pci_ids;
  std::map<std::string, DataSource, std::less<>> m_sources;

  friend struct MatrixLoader;
  friend struct MatrixTables; // the generated tables
};

// True when `today` lies after the month in which the branch reaches its end of life.
bool past_end_of_life(const BranchRow& row, std::chrono::year_month_day today);

// Upper-case runs of letters and digits: "Tesla V100-SXM2-16GB" -> TESLA, V100, SXM2, 16GB.
std::vector<std::string> model_words(std::string_view text);

} // namespace gpf

// Lookups over the compatibility matrix. Versions compare per component as numbers.
#include "gpf/knowledge/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpf {
namespace {

// major.minor of a version (a toolkit "12.4.1" targets what "12.4" targets).
Version major_minor(const Version& v) {
  return Version({v.major(), v.minor()});
}

bool same_minor(const Version& a, const Version& b) {
  return a.major() == b.major() && a.minor() == b.minor();
}

} // namespace

const CudaDriverRow* Matrix::toolkit_release(const Version& cuda) const {
  const CudaDriverRow* ga = nullptr;
  const CudaDriverRow* lowest = nullptr;
  const CudaDriverRow* best = nullptr; // newest release of the minor not above cuda
  for (const auto& row : m_toolkits) {
    if (!same_minor(row.cuda, cuda)) {
      continue;
    }
    if (row.kind == "ga" && !ga) {
      ga = &row;
    }
    if (!lowest || row.cuda < lowest->cuda) {
      lowest = &row;
    }
    if (row.cuda <= cuda && (!best || best->cuda < row.cuda)) {
      best = &row;
    }
  }
  const CudaDriverRow* fallback = ga ? ga : lowest;
  if (cuda.parts().size() < 3) {
    return fallback;
  }
  return best ? best : fallback;
}

const MinorCompatRow* Matrix::minor_compat(unsigned long cuda_major) const {
  for (const auto& row : m_minor) {
    if (row.cuda_major == cuda_major) {
      return &row;
    }
  }
  return nullptr;
}

CudaDriverJudgement Matrix::judge_cuda_on_driver(const Version& cuda, const Version& driver) const {
  CudaDriverJudgement j;
  j.toolkit = toolkit_release(cuda);
  j.floor = minor_compat(cuda.major());
  if (j.toolkit && driver >= j.toolkit->driver) {
    j.status = CudaDriverStatus::ok;
  } else if (j.floor && driver >= j.floor->floor) {
    j.status =
        j.toolkit ? CudaDriverStatus::minor_version_compat : CudaDriverStatus::unknown_release;
  } else if (j.floor || j.toolkit) {
    j.status = CudaDriverStatus::too_old;
  } else {
    j.status = CudaDriverStatus::unknown_major;
  }
  return j;
}

const CudaDriverRow* Matrix::newest_toolkit_for_driver(const Version& driver) const {
  const CudaDriverRow* best = nullptr;
  for (const auto& row : m_toolkits) {
    if (row.driver <= driver && (!best || best->cuda < row.cuda)) {
      best = &row;
    }
  }
  return best;
}

const CudaArchRow* Matrix::cuda_arch(const Version& cc) const {
  for (const auto& row : m_cuda_archs) {
    for (const auto& c : row.ccs) {
      if (same_minor(c, cc)) {
        return &row;
      }
    }
  }
  return nullptr;
}

CudaTargetJudgement Matrix::judge_cuda_targets(const Version& cuda, const Version& cc) const {
  CudaTargetJudgement j;
  j.row = cuda_arch(cc);
  if (!j.row) {
    return j;
  }
  const Version mm = major_minor(cuda);
  if (j.row->removed_in && mm >= *j.row->removed_in) {
    j.status = CudaTargetStatus::dropped;
  } else if (j.row->first_cuda && mm < *j.row->first_cuda) {
    j.status = CudaTargetStatus::not_yet;
  } else {
    j.status = CudaTargetStatus::targeted;
  }
  return j;
}

const DriverArchRow* Matrix::driver_arch(const Version& cc) const {
  const Version mm = major_minor(cc);
  for (const auto& row : m_driver_archs) {
    if (mm >= row.cc_min && mm <= row.cc_max) {
      return &row;
    }
  }
  return nullptr;
}

const KernelFloorRow* Matrix::kernel_floor(unsigned long branch) const {
  for (const auto& row : m_kernel_floors) {
    if (branch >= row.branch_first && (!row.branch_last || branch <= *row.branch_last)) {
      return &row;
    }
  }
  return nullptr;
}

const BranchRow* Matrix::branch(unsigned long branch) const {
  for (const auto& row : m_branches) {
    if (row.branch == branch) {
      return &row;
    }
  }
  return nullptr;
}

std::vector<std::string> model_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) {
    words.push_back(std::move(word));
  }
  return words;
}

const GpuModelRow* Matrix::gpu_model(std::string_view model) const {
  const auto words = model_words(model.substr(0, 256)); // model names are short; bound the input
  for (const auto& row : m_models) {
    for (const auto& name : row.words) {
      if (std::search(words.begin(), words.end(), name.begin(), name.end()) != words.end()) {
        return &row;
      }
    }
  }
  return nullptr;
}

const DataSource* Matrix::source(std::string_view key) const {
  auto it = m_sources.find(key);
  return it == m_sources.end() ? nullptr : &it->second;
}

std::string Matrix::cite(const std::vector<std::string>& keys) const {
  std::string out;
  for (const auto& key : keys) {
    if (!out.empty()) {
      out += "; ";
    }
    const DataSource* s = source(key);
    out += s ? fmt::format("{} ({})", s->table, s->url) : fmt::format("unknown source \"{}\"", key);
  }
  return out;
}

bool Matrix::verified(const std::vector<std::string>& keys) const {
  return std::all_of(keys.begin(), keys.end(), [this](const std::string& key) {
    const auto* s = source(key);
    return s && s->status.rfind("VERIFIED", 0) == 0;
  });
}

bool past_end_of_life(const BranchRow& row, std::chrono::year_month_day today) {
  return row.end_of_life && std::chrono::year_month(today.year(), today.month()) > *row.end_of_life;
}

} // namespace gpf

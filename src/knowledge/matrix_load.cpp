// Parses the data files of the compatibility matrix (data/*.json) into typed rows. The data is
// ours and compiled in, so anything malformed is a build defect: it throws, naming the file, the
// row and the field. Built into the generator (tools/matrix_gen.cpp), which runs it on every
// file at build time, and into the tests; a check uses the compiled tables instead.
#include "gpf/knowledge/matrix.hpp"

#include "gpf/util/json_read.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace gpf {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(fmt::format("data/{}: {}", where, what));
}

// A mistyped member, named by json_read.hpp's path, is a defect like any other.
void check(const Result<void>& r) {
  if (!r) {
    throw std::runtime_error("data/" + r.error().message);
  }
}

class RowReader {
public:
  RowReader(const Json& row, std::string where, std::set<std::string> allowed)
      : m_row(row, where), m_where(std::move(where)) {
    check(m_row.object());
    allowed.insert("source");
    for (const auto& item : row.items()) {
      if (allowed.count(item.key()) == 0) {
        fail(m_where, fmt::format("unknown field \"{}\"", item.key()));
      }
    }
  }

  std::string text(const char* key) const {
    std::string t;
    check(field(key).get(t));
    if (t.empty()) {
      fail(m_where + "." + key, "must be a non-empty string");
    }
    return t;
  }
  std::string optional_text(const char* key) const {
    std::string t;
    check(m_row[key].get(t));
    return t;
  }
  Version version(const char* key) const {
    auto v = Version::parse_exact(text(key));
    if (!v) {
      fail(m_where + "." + key, "is not a dotted numeric version");
    }
    return *v;
  }
  std::optional<Version> optional_version(const char* key) const {
    const auto t = optional_text(key);
    if (t.empty()) {
      return std::nullopt;
    }
    auto v = Version::parse_exact(t);
    if (!v) {
      fail(m_where + "." + key, "is not a dotted numeric version");
    }
    return v;
  }
  unsigned long number(const char* key) const {
    unsigned long n = 0;
    check(field(key).get(n));
    return n;
  }
  std::optional<unsigned long> optional_number(const char* key) const {
    std::optional<unsigned long> n;
    check(m_row[key].get(n));
    return n;
  }
  bool flag(const char* key) const {
    bool b = false;
    check(field(key).get(b));
    return b;
  }
  std::vector<std::string> texts(const char* key) const {
    const JsonIn v = field(key);
    std::vector<std::string> out;
    if (v.json().is_string()) {
      check(v.get(out.emplace_back()));
    } else {
      check(v.get(out));
    }
    if (out.empty() || std::find(out.begin(), out.end(), "") != out.end()) {
      fail(m_where + "." + key, "must be a non-empty string or a non-empty array of strings");
    }
    return out;
  }
  const std::string& where() const { return m_where; }

private:
  // A required member: present and not null.
  JsonIn field(const char* key) const {
    JsonIn v = m_row[key];
    if (v.absent()) {
      fail(m_where, fmt::format("missing field \"{}\"", key));
    }
    return v;
  }

  JsonIn m_row;
  std::string m_where;
};

} // namespace

struct MatrixLoader {
  Matrix m;
  std::set<std::string> file_sources; // the source keys of the file being read

  // Parses one file; registers its sources; returns its rows.
  const Json& open(std::span<const EmbeddedFile> files, const std::string& name, Json& doc) {
    const EmbeddedFile* file = nullptr;
    for (const auto& f : files) {
      if (f.name == name) {
        file = &f;
      }
    }
    if (!file) {
      fail(name, "missing from the embedded data");
    }
    doc = Json::parse(file->text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      fail(name, "is not a JSON object");
    }
    auto sources = doc.find("sources");
    if (sources == doc.end() || !sources->is_object() || sources->empty()) {
      fail(name, "needs a non-empty \"sources\" object");
    }
    file_sources.clear();
    for (const auto& item : sources->items()) {
      file_sources.insert(item.key());
      RowReader r(item.value(), name + ": sources." + item.key(),
                  {"url", "table", "facts", "status"});
      DataSource s{item.key(), r.text("url"), r.text("table"), r.text("facts"), r.text("status")};
      if (s.url.rfind("https://", 0) != 0) {
        fail(r.where() + ".url", "must be an https URL");
      }
      auto [it, inserted] = m.m_sources.emplace(s.key, s);
      if (!inserted && (it->second.url != s.url || it->second.table != s.table)) {
        fail(r.where(), "the same source key is defined differently in another file");
      }
    }
    auto rows = doc.find("rows");
    if (rows == doc.end() || !rows->is_array() || rows->empty()) {
      fail(name, "needs a non-empty \"rows\" array");
    }
    return *rows;
  }

  std::vector<std::string> sources_of(const RowReader& r) const {
    auto keys = r.texts("source");
    for (const auto& k : keys) {
      if (file_sources.count(k) == 0) {
        fail(r.where() + ".source", fmt::format("\"{}\" is not in this file's sources", k));
      }
    }
    return keys;
  }

  void toolkits(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "cuda_toolkit_driver.json";
    const Json& rows = open(files, name, doc);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i),
                  {"release", "cuda", "kind", "driver"});
      CudaDriverRow row{r.text("release"),   r.version("cuda"), r.text("kind"),
                        r.version("driver"), r.text("driver"),  sources_of(r)};
      if (row.kind != "ga" && row.kind != "update" && row.kind != "rc") {
        fail(r.where() + ".kind", "must be ga, update or rc");
      }
      if (row.cuda.parts().size() != 3) {
        fail(r.where() + ".cuda", "must be a three-part toolkit version");
      }
      m.m_toolkits.push_back(std::move(row));
    }
  }

  void minor(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "cuda_minor_compat.json";
    const Json& rows = open(files, name, doc);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i),
                  {"cuda_major", "branch_min", "branch_max_exclusive", "floor"});
      MinorCompatRow row{
          r.number("cuda_major"), r.number("branch_min"), r.optional_number("branch_max_exclusive"),
          r.version("floor"),     r.text("floor"),        sources_of(r)};
      if (row.floor.major() != row.branch_min) {
        fail(r.where() + ".floor", "must lie in branch_min");
      }
      m.m_minor.push_back(std::move(row));
    }
  }

  void cuda_archs(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "cuda_architectures.json";
    const Json& rows = open(files, name, doc);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i),
                  {"arch", "cc", "first_cuda", "last_cuda", "removed_in", "note"});
      CudaArchRow row;
      row.arch = r.text("arch");
      for (const auto& cc : r.texts("cc")) {
        auto v = Version::parse(cc);
        if (!v || v->parts().size() != 2) {
          fail(r.where() + ".cc", fmt::format("\"{}\" is not a compute capability X.Y", cc));
        }
        row.ccs.push_back(*v);
      }
      row.first_cuda = r.optional_version("first_cuda");
      row.last_cuda = r.optional_version("last_cuda");
      row.removed_in = r.optional_version("removed_in");
      if (row.last_cuda.has_value() != row.removed_in.has_value()) {
        fail(r.where(), "last_cuda and removed_in are both set or both null");
      }
      row.note = r.optional_text("note");
      row.sources = sources_of(r);
      m.m_cuda_archs.push_back(std::move(row));
    }
  }

  void driver_archs(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "driver_architectures.json";
    const Json& rows = open(files, name, doc);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i),
                  {"arch", "cc_min", "cc_max", "open_module", "needs_open_module", "min_branch",
                   "last_branch"});
      DriverArchRow row{r.text("arch"),
                        r.version("cc_min"),
                        r.version("cc_max"),
                        r.flag("open_module"),
                        r.flag("needs_open_module"),
                        r.optional_number("min_branch"),
                        r.optional_number("last_branch"),
                        sources_of(r)};
      if (row.cc_max < row.cc_min || (row.needs_open_module && !row.open_module)) {
        fail(r.where(), "inconsistent row");
      }
      m.m_driver_archs.push_back(std::move(row));
    }
  }

  void kernel_floors(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "driver_kernel_floors.json";
    const Json& rows = open(files, name, doc);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i),
                  {"branch_first", "branch_last", "kernel_floor", "hard_floor", "note"});
      KernelFloorRow row{r.number("branch_first"),
                         r.optional_number("branch_last"),
                         r.version("kernel_floor"),
                         r.text("kernel_floor"),
                         r.text("hard_floor"),
                         r.optional_text("note"),
                         sources_of(r)};
      m.m_kernel_floors.push_back(std::move(row));
    }
  }

  void branches(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "driver_branches.json";
    const Json& rows = open(files, name, doc);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i),
                  {"branch", "designation", "end_of_life", "maintained", "max_cuda_major"});
      BranchRow row;
      row.branch = r.number("branch");
      row.designation = r.text("designation");
      row.end_of_life_text = r.optional_text("end_of_life");
      if (!row.end_of_life_text.empty()) {
        const auto& t = row.end_of_life_text;
        const auto y = t.size() == 7 && t[4] == '-' ? Version::parse(t.substr(0, 4)) : std::nullopt;
        const auto mo = y ? Version::parse(t.substr(5)) : std::nullopt;
        if (!y || !mo || mo->major() < 1 || mo->major() > 12) {
          fail(r.where() + ".end_of_life", "must be YYYY-MM");
        }
        row.end_of_life = std::chrono::year(static_cast<int>(y->major())) /
                          std::chrono::month(static_cast<unsigned>(mo->major()));
      }
      row.maintained = r.flag("maintained");
      row.max_cuda_major = r.optional_number("max_cuda_major");
      row.sources = sources_of(r);
      m.m_branches.push_back(std::move(row));
    }
  }

  void models(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "gpu_models.json";
    const Json& rows = open(files, name, doc);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i),
                  {"names", "examples", "arch", "cc", "segment", "needs_open_module", "min_branch",
                   "note"});
      GpuModelRow row;
      row.names = r.texts("names");
      for (const auto& n : row.names) {
        row.words.push_back(model_words(n));
        if (row.words.back().empty()) {
          fail(r.where() + ".names", fmt::format("\"{}\" has no letters or digits", n));
        }
      }
      row.examples = r.texts("examples");
      row.arch = r.text("arch");
      row.cc = r.version("cc");
      row.segment = r.text("segment");
      if (row.segment != "datacenter" && row.segment != "workstation" && row.segment != "geforce") {
        fail(r.where() + ".segment", "must be datacenter, workstation or geforce");
      }
      row.needs_open_module = r.flag("needs_open_module");
      row.min_branch = r.optional_number("min_branch");
      row.note = r.optional_text("note");
      row.sources = sources_of(r);
      m.m_models.push_back(std::move(row));
    }
  }

  void pci_ids(std::span<const EmbeddedFile> files) {
    Json doc;
    const std::string name = "gpu_pci_ids.json";
    const Json& rows = open(files, name, doc);
    RowReader top(doc, name, {"table", "description", "release", "released", "sources", "rows"});
    m.m_pci_ids.release = top.text("release");
    m.m_pci_ids.released = top.text("released");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      RowReader r(rows[i], fmt::format("{}: rows[{}]", name, i), {"id", "name"});
      const std::string id = r.text("id");
      if (id.size() != 4 || id.find_first_not_of("0123456789ABCDEF") != std::string::npos) {
        fail(r.where() + ".id", "must be four upper-case hexadecimal digits");
      }
      PciIdRow row{static_cast<unsigned>(std::stoul(id, nullptr, 16)), r.text("name"),
                   sources_of(r)};
      if (!m.m_pci_ids.rows.empty() && row.id <= m.m_pci_ids.rows.back().id) {
        fail(r.where() + ".id", "must be above the previous row's (ascending, each id once)");
      }
      m.m_pci_ids.rows.push_back(std::move(row));
    }
  }
};

Matrix Matrix::load(std::span<const EmbeddedFile> files) {
  MatrixLoader loader;
  loader.toolkits(files);
  loader.minor(files);
  loader.cuda_archs(files);
  loader.driver_archs(files);
  loader.kernel_floors(files);
  loader.branches(files);
  loader.models(files);
  loader.pci_ids(files);
  return std::move(loader.m);
}

} // namespace gpf

// Build-time generator of the compatibility matrix: reads data/*.json, validates every row with
// Matrix::load (required fields, types, well-formed versions, a source named in the file's
// sources) and writes a C++ source whose tables are the same rows, so the checker parses no JSON
// for the matrix at run time. A bad row fails the build with the file, the row and the field.
//   matrix_gen OUT.cpp DATA_DIR a.json b.json ...
#include "gpf/knowledge/matrix.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gpf::Version;

// A C++ string literal of any bytes: printable ASCII as is, the rest as three-digit octal escapes
// (an octal escape ends after three digits, so a following digit cannot join it).
std::string lit(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f && c != '?') { // '?': no trigraph question
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\{:03o}", c);
    }
  }
  return out + "\"";
}

std::string lits(const std::vector<std::string>& v) {
  std::string out = "{";
  for (const auto& s : v) {
    out += (out.size() > 1 ? ", " : "") + lit(s);
  }
  return out + "}";
}

std::string ver(const Version& v) {
  return fmt::format("Version({{{}}})", fmt::join(v.parts(), ", "));
}

std::string opt_ver(const std::optional<Version>& v) {
  return v ? fmt::format("std::optional<Version>({})", ver(*v)) : "std::nullopt";
}

std::string opt_num(const std::optional<unsigned long>& n) {
  return n ? fmt::format("std::optional<unsigned long>({}UL)", *n) : "std::nullopt";
}

std::string flag(bool b) {
  return b ? "true" : "false";
}

std::string tables(const gpf::Matrix& m) {
  std::string o;
  o += "  m.m_toolkits = {\n";
  for (const auto& r : m.toolkit_rows()) {
    o += fmt::format("      {{{}, {}, {}, {}, {}, {}}},\n", lit(r.release), ver(r.cuda),
                     lit(r.kind), ver(r.driver), lit(r.driver_text), lits(r.sources));
  }
  o += "  };\n  m.m_minor = {\n";
  for (const auto& r : m.minor_compat_rows()) {
    o += fmt::format("      {{{}UL, {}UL, {}, {}, {}, {}}},\n", r.cuda_major, r.branch_min,
                     opt_num(r.branch_max_exclusive), ver(r.floor), lit(r.floor_text),
                     lits(r.sources));
  }
  o += "  };\n  m.m_cuda_archs = {\n";
  for (const auto& r : m.cuda_arch_rows()) {
    std::vector<std::string> ccs;
    for (const auto& cc : r.ccs) {
      ccs.push_back(ver(cc));
    }
    o += fmt::format("      {{{}, {{{}}}, {}, {}, {}, {}, {}}},\n", lit(r.arch),
                     fmt::join(ccs, ", "), opt_ver(r.first_cuda), opt_ver(r.last_cuda),
                     opt_ver(r.removed_in), lit(r.note), lits(r.sources));
  }
  o += "  };\n  m.m_driver_archs = {\n";
  for (const auto& r : m.driver_arch_rows()) {
    o += fmt::format("      {{{}, {}, {}, {}, {}, {}, {}, {}}},\n", lit(r.arch), ver(r.cc_min),
                     ver(r.cc_max), flag(r.open_module), flag(r.needs_open_module),
                     opt_num(r.min_branch), opt_num(r.last_branch), lits(r.sources));
  }
  o += "  };\n  m.m_kernel_floors = {\n";
  for (const auto& r : m.kernel_floor_rows()) {
    o += fmt::format("      {{{}UL, {}, {}, {}, {}, {}, {}}},\n", r.branch_first,
                     opt_num(r.branch_last), ver(r.kernel_floor), lit(r.kernel_floor_text),
                     lit(r.hard_floor), lit(r.note), lits(r.sources));
  }
  o += "  };\n  m.m_branches = {\n";
  for (const auto& r : m.branch_rows()) {
    const std::string eol =
        r.end_of_life ? fmt::format("std::chrono::year({}) / std::chrono::month({}U)",
                                    static_cast<int>(r.end_of_life->year()),
                                    static_cast<unsigned>(r.end_of_life->month()))
                      : "std::nullopt";
    o += fmt::format("      {{{}UL, {}, {}, {}, {}, {}, {}}},\n", r.branch, lit(r.designation),
                     eol, lit(r.end_of_life_text), flag(r.maintained), opt_num(r.max_cuda_major),
                     lits(r.sources));
  }
  o += "  };\n  m.m_models = {\n";
  for (const auto& r : m.gpu_model_rows()) {
    std::vector<std::string> words;
    for (const auto& w : r.words) {
      words.push_back(lits(w));
    }
    o += fmt::format("      {{{}, {{{}}}, {}, {}, {}, {}, {}, {}, {}, {}}},\n", lits(r.names),
                     fmt::join(words, ", "), lits(r.examples), lit(r.arch), ver(r.cc),
                     lit(r.segment), flag(r.needs_open_module), opt_num(r.min_branch),
                     lit(r.note), lits(r.sources));
  }
  o += fmt::format("  }};\n  m.m_pci_ids.release = {};\n  m.m_pci_ids.released = {};\n",
                   lit(m.pci_ids().release), lit(m.pci_ids().released));
  o += "  m.m_pci_ids.rows = {\n";
  for (const auto& r : m.pci_ids().rows) {
    o += fmt::format("      {{0x{:04X}U, {}, {}}},\n", r.id, lit(r.name), lits(r.sources));
  }
  o += "  };\n  m.m_sources = {\n";
  for (const auto& [key, s] : m.sources()) {
    o += fmt::format("      {{{}, {{{}, {}, {}, {}, {}}}}},\n", lit(key), lit(s.key), lit(s.url),
                     lit(s.table), lit(s.facts), lit(s.status));
  }
  o += "  };\n";
  return o;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: matrix_gen OUT.cpp DATA_DIR FILE.json...\n");
    return 2;
  }
  const std::string out = argv[1];
  const std::string dir = argv[2];
  std::vector<std::string> names;
  std::vector<std::string> texts;
  for (int i = 3; i < argc; ++i) {
    std::ifstream in(dir + "/" + argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "matrix_gen: %s/%s: cannot be read\n", dir.c_str(), argv[i]);
      return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    names.emplace_back(argv[i]);
    texts.push_back(text.str());
  }
  std::vector<gpf::EmbeddedFile> files;
  for (std::size_t i = 0; i < names.size(); ++i) {
    files.push_back({names[i], texts[i]});
  }
  std::string text;
  try {
    const gpf::Matrix m = gpf::Matrix::load(files);
    text = "// Generated by tools/matrix_gen from data/*.json, validated when generated; edit the\n"
           "// data files, not this.\n"
           "#include \"gpf/knowledge/matrix.hpp\"\n\n"
           "namespace gpf {\n\n"
           "struct MatrixTables {\n"
           "  static Matrix build();\n"
           "};\n\n"
           "Matrix MatrixTables::build() {\n"
           "  Matrix m;\n" +
           tables(m) +
           "  return m;\n"
           "}\n\n"
           "const Matrix& Matrix::get() {\n"
           "  static const Matrix matrix = MatrixTables::build();\n"
           "  return matrix;\n"
           "}\n\n"
           "} // namespace gpf\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matrix_gen: in %s: %s\n", dir.c_str(), e.what());
    return 1;
  }
  std::ofstream o(out, std::ios::binary | std::ios::trunc);
  o << text;
  if (!o.flush()) {
    std::fprintf(stderr, "matrix_gen: %s: cannot be written\n", out.c_str());
    return 1;
  }
  return 0;
}

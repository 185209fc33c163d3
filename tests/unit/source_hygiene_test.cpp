// Probe code must read the host only through Host (style.md practice 1): no absolute paths in
// string literals, no getenv/uname/open/fopen/ifstream of its own. This test reads the sources.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

TEST_CASE("probe sources never bypass the host") {
  const fs::path dir = fs::path(GPF_SOURCE_DIR) / "src" / "probes";
  const std::regex forbidden(R"re("/(proc|sys|dev|etc|usr|lib|lib64|var|run|tmp|opt|home|root)(/|")|\bgetenv\s*\(|\buname\s*\(|\bfopen\s*\(|\bifstream\b|::open\s*\(|\bopendir\s*\()re");
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) {
      continue;
    }
    std::ifstream in(entry.path());
    std::string line;
    int number = 0;
    ++files;
    while (std::getline(in, line)) {
      ++number;
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      INFO(entry.path().string() << ":" << number << ": " << line);
      CHECK_FALSE(std::regex_search(code, forbidden));
    }
  }
  CHECK(files >= 4);
}

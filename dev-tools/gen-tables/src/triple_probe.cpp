// Asks LLVM's llvm::Triple about triples; built and run by gen-tables (src/triple.rs).
//
// Reads one request per line from stdin, fields separated by tabs, and answers with one line
// each:
//   N <s>      -> normalize(s) in the forms ANY, THREE_IDENT, FOUR_IDENT, FIVE_IDENT
//   P <s>      -> arch, sub-arch (enum value), vendor, OS, environment, object format names
//                 of Triple(s)
//   C <a> <b>  -> 1 if Triple(a).isCompatibleWith(Triple(b)), else 0
#include <llvm/TargetParser/Triple.h>

#include <iostream>
#include <string>
#include <vector>

using llvm::Triple;

static std::vector<std::string> split(const std::string &line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos)
      return fields;
    start = tab + 1;
  }
}

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<std::string> f = split(line);
    if (f[0] == "N" && f.size() == 2) {
      std::cout << Triple::normalize(f[1], Triple::CanonicalForm::ANY) << '\t'
                << Triple::normalize(f[1], Triple::CanonicalForm::THREE_IDENT) << '\t'
                << Triple::normalize(f[1], Triple::CanonicalForm::FOUR_IDENT) << '\t'
                << Triple::normalize(f[1], Triple::CanonicalForm::FIVE_IDENT) << '\n';
    } else if (f[0] == "P" && f.size() == 2) {
      Triple t(f[1]);
      std::cout << Triple::getArchTypeName(t.getArch()).str() << '\t'
                << static_cast<int>(t.getSubArch()) << '\t'
                << Triple::getVendorTypeName(t.getVendor()).str() << '\t'
                << Triple::getOSTypeName(t.getOS()).str() << '\t'
                << Triple::getEnvironmentTypeName(t.getEnvironment()).str() << '\t'
                << Triple::getObjectFormatTypeName(t.getObjectFormat()).str() << '\n';
    } else if (f[0] == "C" && f.size() == 3) {
      std::cout << (Triple(f[1]).isCompatibleWith(Triple(f[2])) ? 1 : 0) << '\n';
    } else {
      std::cerr << "triple_probe: bad request: " << line << '\n';
      return 2;
    }
  }
  return 0;
}

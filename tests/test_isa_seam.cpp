// The ISA seam (docs/architecture.md, "One ISA seam"): outside asm/<isa>/ and tests/<isa>/, no file
// names an ISA's registers, mnemonics, features or plumbing. Adding a second ISA then touches asm/,
// probes/ and tests/<isa>/ only. The rest of the code asks the target instead.
//
// While the seam is being built (docs/plans/isa-seam.md), kBaseline holds how many lines of each file
// still name x86 things. The ratchet only turns one way: a file may not gain such lines, and a file
// that lost some must have its entry lowered in the same commit (so the map cannot go stale and hide a
// regression later). When the map is empty the test is absolute.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Pattern {
  const char* group;
  std::regex re;
  // Where the pattern applies: everywhere scanned, or only outside / only inside asm/ (asm/'s top
  // level, the ISA-neutral part of the emit stage, may use asmjit's neutral core but no ISA header).
  enum class Where { everywhere, outside_asm, in_asm } where = Where::everywhere;
};

// x86 vocabulary. The bare two-letter register names (dx, cx, sp, bp) are left out: SVG code uses
// them as attribute names. `fma` is banned only as a bare word that is not a function call or a
// catalog group ("fp.fma"): the generic word FMA and OpenCL's fma() are not x86 knowledge.
const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> p = [] {
    const auto ecma = std::regex::ECMAScript | std::regex::optimize;
    std::vector<Pattern> v;
    v.push_back({"register", std::regex(R"(\b([xyz]mm([0-9]|[12][0-9]|3[01])?|tmm[0-7]?|k[0-7]|[re](ax|bx|cx|dx|si|di|sp|bp|ip)|r(8|9|1[0-5])[dwb]?|r(8|16|32|64)|m(8|16|32|64|128|256|512)(bcst)?|vm(32|64)[xyz])\b)", ecma)});
    v.push_back({"mnemonic", std::regex(R"(\b(vf(n?m(add|sub)|madd|msub)\w+|v?(add|sub|mul|div|sqrt|min|max)(ps|pd|ss|sd|ph|sh)|vp[a-z0-9]+|vdpbf16ps|v?movu?(ps|pd)|vmov\w+|vbroadcast\w+|vgather\w+|vscatter\w+|vzeroupper|kmov[bwdq]|kxnor[bwdq]|imul|movbe|[ls]dmxcsr|stmxcsr|[lms]fence|rdtscp?|xgetbv|cpuid|tdp\w+|ldtilecfg|tileloadd\w*)\b)", ecma)});
    v.push_back({"feature", std::regex(R"(\b(avx(2|512\w*|_\w+)?|AVX(-?512|2)?|amx(_\w+)?|AMX|sse([234]\w*)?|SSE\d?|ssse3|f16c|xop|bmi2?|vaes|vpclmulqdq|gfni|xsave\w*|xcr0|XCR0|os_(avx\w*|amx))\b)", ecma)});
    v.push_back({"feature", std::regex(R"((^|[^.:\w])fma4?\b(?!\s*\())", ecma)});
    v.push_back({"plumbing", std::regex(R"(\bx86(_64|-64)?\b|\b(x86intrin|immintrin|emmintrin|xmmintrin|cpuid)\.h\b|__rdtsc|\b_mm_\w+|\b__m(128|256|512)\w*|__x86_64__|__i386__|\bMAP_32BIT\b)", ecma)});
    // AArch64 vocabulary: the NEON/SVE mnemonics and registers that would carry Arm knowledge out of
    // asm/a64/, its feature names, and its system registers.
    v.push_back({"register", std::regex(R"(\bv([0-9]|[12][0-9]|3[01])?\.(8b|16b|4h|8h|2s|4s|1d|2d|1q)\b)", ecma)});
    v.push_back({"mnemonic", std::regex(R"(\b(fml[as]|[su]dot|usdot|sudot|bfdot|bfmmla|bfmlal[bt]|[su]mmla|usmmla|ld[1-4]r?|st[1-4]|ld[np]p|st[np]p|ldur|stur|umulh|smulh|cntvct_el0|midr_el1)\b)", ecma)});
    v.push_back({"feature", std::regex(R"(\b(asimd\w*|neon|NEON|sve\w*|SVE2?|i8mm|fphp|HWCAP2?|__aarch64__)\b)", ecma)});
    v.push_back({"asmjit", std::regex(R"(#include\s*<asmjit/)", ecma), Pattern::Where::outside_asm});
    v.push_back({"asmjit", std::regex(R"(#include\s*<asmjit/(?!core\.h>))", ecma), Pattern::Where::in_asm});
    return v;
  }();
  return p;
}

// Top-level test files whose instruction texts are labels only: they are never resolved or run, and
// the reporters they check print whatever text a result carries.
const std::set<std::string> kLabelOnlyTests = {
    "report_fixture.hpp",   "test_ceiling_report.cpp", "test_console_report.cpp", "test_csv_report.cpp",
    "test_json_report.cpp", "test_markdown_report.cpp", "test_html_report.cpp",  "test_matmul_report.cpp",
    "test_svg_heatmap.cpp", "test_svg_plots.cpp",       "test_compare.cpp",       "test_cluster.cpp",
    "test_input_file.cpp",  "test_matmul_common.cpp",   "test_ceilings.cpp",      "test_isa_seam.cpp",
    "test_pipe_report.cpp", "test_result_reader.cpp"};

// Lines that still name x86 things, per file, while the seam is built. Only ever lowered.
const std::map<std::string, int> kBaseline = {};

bool scanned_name(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cmake" || ext == ".in" ||
         p.filename() == "CMakeLists.txt";
}

// Every file the seam covers, as a path relative to the source tree.
std::vector<std::string> seam_files(const fs::path& root) {
  std::vector<std::string> out;
  for (const char* dir : {"src", "include"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.is_regular_file() && scanned_name(e.path())) out.push_back(fs::relative(e.path(), root).string());
  // asm/ and tests/: the top level only; asm/<isa>/ and tests/<isa>/ are where an ISA lives.
  for (const char* dir : {"asm", "tests"})
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.is_regular_file() && scanned_name(e.path()) &&
          !(std::string(dir) == "tests" && kLabelOnlyTests.count(e.path().filename().string())))
        out.push_back(fs::relative(e.path(), root).string());
  out.push_back("CMakeLists.txt");
  return out;
}

struct Finding {
  int line;
  std::string group, token;
};

std::vector<Finding> findings(const fs::path& root, const std::string& rel) {
  std::ifstream in(root / rel);
  const bool in_asm = rel.rfind("asm/", 0) == 0;
  std::vector<Finding> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    for (const auto& p : patterns()) {
      if ((p.where == Pattern::Where::outside_asm && in_asm) || (p.where == Pattern::Where::in_asm && !in_asm))
        continue;
      std::smatch m;
      if (std::regex_search(line, m, p.re)) {
        out.push_back({n, p.group, m.str(0)});
        break;  // one finding per line: the ratchet counts lines
      }
    }
  return out;
}

}  // namespace

TEST_CASE("isa seam: no file outside asm/<isa>/ names an ISA's registers, mnemonics or features", "[seam]") {
  const fs::path root = PEAKPROBE_SOURCE_DIR;
  std::ostringstream report, baseline;
  int over = 0, stale = 0;
  std::set<std::string> seen;
  for (const std::string& rel : seam_files(root)) {
    seen.insert(rel);
    const auto found = findings(root, rel);
    const auto it = kBaseline.find(rel);
    const int allowed = it == kBaseline.end() ? 0 : it->second;
    const int n = int(found.size());
    if (n) baseline << "    {\"" << rel << "\", " << n << "},\n";
    if (n > allowed) {
      ++over;
      report << rel << ": " << n << " lines name x86 things, at most " << allowed << " allowed\n";
      for (const auto& f : found) report << "  " << rel << ":" << f.line << ": [" << f.group << "] " << f.token << "\n";
    } else if (n < allowed) {
      ++stale;
      report << rel << ": down to " << n << " lines from " << allowed << ": lower its kBaseline entry\n";
    }
  }
  for (const auto& [rel, n] : kBaseline)
    if (n > 0 && !seen.count(rel)) {
      ++stale;
      report << rel << ": in kBaseline but no longer scanned: remove its entry\n";
    }
  INFO(report.str() << "kBaseline as the tree stands:\n" << baseline.str());
  CHECK(over == 0);
  CHECK(stale == 0);
}

TEST_CASE("isa seam: the label-only tests stay label-only", "[seam]") {
  // A file on the allow-list may carry instruction texts as labels, but may not start resolving or
  // running ISA code, or the list would quietly widen the seam.
  const fs::path root = PEAKPROBE_SOURCE_DIR;
  const std::regex runs_isa_code(R"(#include\s*"(asm/|harness/probe_runner|harness/clock)|\bresolve_inst\s*\()");
  for (const std::string& name : kLabelOnlyTests) {
    const fs::path p = root / "tests" / name;
    INFO(name);
    REQUIRE(fs::exists(p));
    if (name == "test_isa_seam.cpp") continue;  // this file spells the patterns out
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      INFO("line " << n << ": " << line);
      CHECK_FALSE(std::regex_search(line, runs_isa_code));
    }
  }
}

TEST_CASE("isa seam: every registered ISA has its asm, probes and tests folders", "[seam]") {
  const fs::path root = PEAKPROBE_SOURCE_DIR;
  std::istringstream isas(PEAKPROBE_ISAS);
  std::string isa;
  int n = 0;
  while (std::getline(isas, isa, ',')) {
    INFO("ISA " << isa);
    CHECK(fs::is_directory(root / "asm" / isa));
    CHECK(fs::is_directory(root / "tests" / isa));
    CHECK(fs::exists(root / "probes" / (isa + ".catalog")));
    CHECK(fs::exists(root / "probes" / (isa + ".sets")));
    ++n;
  }
  CHECK(n >= 1);
}

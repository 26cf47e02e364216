// End-to-end checks of the peakprobe executable that cut across its subcommands: the top-level
// --help, placement and output checks every command shares, hostile option values and input files.
// Bad input gets a clear message and a stable exit code, never a crash. The tests of one
// subcommand are in the test file of its source (tests/test_cmd_*.cpp).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_forms.hpp"
#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "target_fixture.hpp"

namespace {

using peakprobe::test::add_form;
using peakprobe::test::arg;
using peakprobe::test::check_refused;
using peakprobe::test::mul_form;
using peakprobe::test::quoted;
using peakprobe::test::Refusal;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;
using peakprobe::test::target;

}  // namespace

TEST_CASE("cli: --help teaches the subcommands", "[main]") {
  Run r = run_peakprobe("--help");
  CHECK(r.rc == 0);
  for (const char* sub : {"info", "list", "run", "inst", "--json", "Exit codes"})
    CHECK(r.out.find(sub) != std::string::npos);
  Run i = run_peakprobe("inst --help");
  CHECK(i.rc == 0);
  CHECK(i.out.find("Operand kinds") != std::string::npos);
}

TEST_CASE("cli: an unwritable output path fails before measuring and leaves nothing", "[main]") {
  Run r = run_peakprobe("inst " + arg(add_form()) + " --json /nonexistent-dir/out.json");
  CHECK(r.rc == 3);
  CHECK(r.err.find("/nonexistent-dir") != std::string::npos);
}

TEST_CASE("cli: report --pipes without --table is refused before measuring", "[main]") {
  Run r = run_peakprobe("report --pipes --out /nonexistent-dir/folder");
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("--table"));
}

TEST_CASE("cli: impossible placement is refused", "[main]") {
  CHECK(run_peakprobe("inst " + arg(add_form()) + " --threads 0").rc == 2);
  CHECK(run_peakprobe("inst " + arg(add_form()) + " --threads 100000").rc == 2);
  CHECK(run_peakprobe("inst " + arg(add_form()) + " --cpu 100000").rc == 2);
  CHECK(run_peakprobe("run --filter no-such-row-anywhere").rc == 2);
  CHECK(run_peakprobe("frobnicate").rc == 2);
}

TEST_CASE("cli: hostile option values are refused with exit 2 before anything runs", "[main]") {
  // (Instruction texts the ISA's encoder refuses are in tests/<isa>/test_main.cpp.)
  const std::string inst = "inst " + arg(add_form());
  const std::vector<Refusal> cases = {
      {inst + " --dtype garbage", "--dtype 'garbage'"},
      {inst + " --ops nan", "--ops"},
      {inst + " --ops inf", "--ops"},
      {inst + " --ops -1", "--ops"},
      {inst + " --cpu -5", "--cpu"},
      {inst + " --threads 99999999999", "--threads"},
      {inst + " --listing --json -", "--listing prints to stdout"},
      {"matmul --shape 8,8,8 --baseline garbage", "--baseline 'garbage'"},
      {"matmul --shape 8,8,8 --baseline ''", "--baseline ''"},
      {"matmul --shape 65536,65536,65536", "FLOP a call"},
      {"matmul --shape 8,8,8 --batch -1", "--batch"},
      {"bench matmul --max-gflop nan", "--max-gflop"},
      {"bench matmul --max-gflop 1e308", "--max-gflop"},
      {"bench matmul --baseline mkl", "--baseline 'mkl'"},
      {"bench matmul --dtypes ''", "--dtypes"},
      {"mem -k ,", "--kernel"},
      {"mem --isa ,", "--isa"},
      {"run --json ''", "empty"},
      {"run --catalog ''", "empty"},
      {"run --out here", "--out"},
      {"--quick run", "--quick"},
      {"info --csv info.csv", "info writes no CSV"},
      {"info --markdown -", "info writes no Markdown"},
      {"compare a.json b.json --csv -", "compare writes no CSV"},
      {"score --flops -5 --bytes 1 --seconds 1", "positive"},  // no --table: refused before measuring one
      {"score --flops 1 --bytes 1 --seconds 1e10", "--seconds"},
  };
  check_refused(cases);
}

TEST_CASE("cli: input files must be regular files of a sane size", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A directory was read as an empty catalog, a FIFO blocked forever, /dev/zero never ended.
  for (const std::string& path : {dir.path.string(), fifo, std::string("/dev/zero")}) {
    INFO(path);
    Run cat = run_peakprobe("list --catalog " + quoted(path));
    CHECK(cat.rc == 2);
    CHECK_THAT(cat.err, Catch::Contains("not a regular file"));
    Run cmp = run_peakprobe("compare " + quoted(path) + " " + quoted(path));
    CHECK(cmp.rc == 2);
    CHECK_THAT(cmp.err, Catch::Contains("not a regular file"));
    Run table = run_peakprobe("score --flops 1 --bytes 1 --seconds 1 --table " + quoted(path));
    CHECK(table.rc == 2);
    CHECK_THAT(table.err, Catch::Contains("not a regular file"));
  }
}

TEST_CASE("cli: the set of outputs is checked whole before anything is measured", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string good = quoted(dir.file("good.json"));
  // Two documents on stdout, one file twice: usage errors.
  for (const std::string& args : {std::string("run --json - --csv -"), std::string("list --json - --markdown /dev/stdout"),
                                  "inst " + arg(add_form()) + " --json " + good + " --csv " + good}) {
    INFO(args);
    Run r = run_peakprobe(args);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
  }
  // A later target that cannot be written fails every command before it measures, and the earlier
  // target is not written either.
  const std::vector<std::string> commands = {
      "run --filter " + arg(target().help_texts().run_filter), "inst " + arg(add_form()),
      "pair " + arg(add_form()) + " " + arg(mul_form()), "mix " + arg(add_form()), "flopmix",
      "pairs --set " + target().help_texts().pairs_set + " --svg " + quoted(dir.file("p.svg")),
      "mem --sizes 32KiB", "latency --sizes 32KiB", "roofline", "matmul --shape 8,8,8 --baseline none",
      "bench matmul --shapes 8 --dtypes f32", "info", "list", "report --out " + quoted(dir.file("folder")),
      "report --table --pipes --out " + quoted(dir.file("folder")), "score --flops 1 --bytes 1 --seconds 1"};
  for (const auto& bad : {quoted(fifo), quoted(dir.file("missing/x.md")), std::string("/dev/null"), quoted(dir.path.string())}) {
    for (const auto& cmd : commands) {
      const std::string args = cmd + " --json " + good + " --markdown " + bad;
      INFO(args);
      Run r = run_peakprobe(args);
      CHECK((r.rc == 3 || (r.rc == 2 && cmd.rfind("info", 0) == 0)));  // info writes no Markdown at all
      CHECK(r.out.empty());
      CHECK_FALSE(std::filesystem::exists(dir.file("good.json")));
      CHECK_FALSE(std::filesystem::exists(dir.file("folder")));  // made for the report, removed again
    }
  }
  Run folder = run_peakprobe("report --out " + quoted(fifo));
  CHECK(folder.rc == 3);
  CHECK_THAT(folder.err, Catch::Contains("not a directory"));
}

TEST_CASE("cli: very long and non-UTF-8 arguments get a short escaped message", "[main]") {
  const std::string long_text(100000, 'a');
  Run inst = run_peakprobe("inst " + quoted(long_text));
  CHECK(inst.rc == 2);
  CHECK_THAT(inst.err, Catch::Contains("at most 256"));
  CHECK(inst.err.size() < 3000);
  Run filter = run_peakprobe("run --filter " + quoted("\xff\x1b[2J" + long_text));
  CHECK(filter.rc == 2);
  CHECK_THAT(filter.err, Catch::Contains("\\xFF\\x1B[2J"));
  CHECK(filter.err.find('\x1b') == std::string::npos);
  CHECK(filter.err.size() < 3000);
  Run cpu = run_peakprobe("inst " + arg(add_form()) + " --cpu " + quoted("\xff"));
  CHECK(cpu.rc == 2);
  CHECK(cpu.err.find('\xff') == std::string::npos);
}

// `peakprobe gpu` and `gpu list` (src/cli/cmd_gpu.cpp): OpenCL devices measured each in a worker
// process; no runtime or no device is a skipped report with exit 0. Its options are checked before
// any device is listed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "skip.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::quoted;
using peakprobe::test::Refusal;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;
using peakprobe::test::run_peakprobe_env;
using peakprobe::test::slurp;

// An OpenCL loader that is not there: no runtime, whatever this machine has installed.
const char* const kNoRuntime = "PEAKPROBE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1";

}  // namespace

TEST_CASE("cli: gpu without an OpenCL runtime is a skipped report, exit 0", "[main]") {
  const Run none = run_peakprobe_env("PEAKPROBE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", "gpu --quick");
  INFO(none.out << none.err);
  CHECK(none.rc == 0);
  CHECK(none.out.find("skipped") != std::string::npos);
  CHECK(none.out.find("no OpenCL runtime") != std::string::npos);
  const Run listed = run_peakprobe_env("PEAKPROBE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", "gpu list");
  CHECK(listed.rc == 0);
  CHECK(listed.out.find("no OpenCL device") != std::string::npos);
}

TEST_CASE("cli: gpu --svg plots one device's roofline, or writes nothing when there is none", "[main][gpu]") {
  const peakprobe::test::ScratchDir dir;
  const std::string none = dir.file("none.svg");
  const Run skipped = run_peakprobe_env("PEAKPROBE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1",
                                        "gpu --quick --svg " + quoted(none));
  CHECK(skipped.rc == 1);
  CHECK_THAT(skipped.err, Catch::Contains("no device has figures to plot"));
  CHECK_FALSE(std::filesystem::exists(none));
  CHECK(run_peakprobe("gpu --svg " + quoted(dir.file("l.svg")) + " list").rc == 2);
  // On a real device (PoCL in CI): the transfer figures alone make a roofline with host memory roofs.
  const Run listed = run_peakprobe("gpu list --json -");
  REQUIRE(listed.rc == 0);
  if (nlohmann::json::parse(listed.out)["devices"].empty()) PP_SKIP("no OpenCL device here");
  const std::string plot = dir.file("device.svg");
  const Run drawn = run_peakprobe("gpu --device 0 --only transfer --quick --svg " + quoted(plot));
  INFO(drawn.err);
  REQUIRE(drawn.rc == 0);
  const std::string svg = slurp(plot);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK_THAT(svg, Catch::Contains("Roofline, OpenCL device 0"));
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
}

TEST_CASE("cli: gpu refuses unknown types, widths and parts with exit 2", "[main]") {
  CHECK(run_peakprobe("gpu --dtypes f32,bf17").rc == 2);
  CHECK(run_peakprobe("gpu --widths 3").rc == 2);
  CHECK(run_peakprobe("gpu --only compute,flops").rc == 2);
  CHECK(run_peakprobe("gpu --markdown -").rc == 2);
}

TEST_CASE("gpu: refusals name the unknown type, width, part or format, before any device is listed", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::vector<Refusal> cases = {
      {"gpu --dtypes f32,zz-type", "--dtypes: unknown data type 'zz-type'"},
      {"gpu --widths 4x", "--widths: '4x' is not an OpenCL vector width (1, 2, 4, 8, 16)"},
      {"gpu --widths 1,3", "'3'"},
      {"gpu --only compute,zz-part", "--only: unknown part 'zz-part' (compute, memory, latency, transfer)"},
      {"gpu --markdown -", "gpu writes no Markdown (--markdown); use --json or --csv"},
      {"gpu list --csv -", "gpu list writes no CSV (--csv); use --json"},
      {"gpu list --svg " + quoted(dir.file("list.svg")), "gpu list writes no SVG"},
  };
  check_refused(cases);
  CHECK_FALSE(std::filesystem::exists(dir.file("list.svg")));
}

TEST_CASE("gpu: --help teaches the parts, the types, the widths and the list", "[main]") {
  Run r = run_peakprobe("gpu --help");
  CHECK(r.rc == 0);
  for (const char* taught : {"--device", "--dtypes", "i8dot", "u8i8dot", "--widths", "1,2,4,8,16", "--only",
                             "compute,memory,latency,transfer", "--quick", "--svg", "list", "peakprobe gpu list"})
    CHECK_THAT(r.out, Catch::Contains(taught));
}

TEST_CASE("gpu: without a runtime the documents say why, and list's warning goes to stderr unless --quiet", "[main]") {
  Run doc = run_peakprobe_env(kNoRuntime, "gpu --quick --json -");
  REQUIRE(doc.rc == 0);
  const auto j = nlohmann::json::parse(doc.out);  // the document alone
  CHECK(j["schema"] == "peakprobe-gpu/1");
  CHECK_THAT(j["command"].get<std::string>(), Catch::StartsWith("peakprobe gpu --quick"));
  REQUIRE(j["devices"].size() == 1);
  CHECK(j["devices"][0]["status"] == "skipped");
  CHECK_THAT(j["devices"][0]["reason"].get<std::string>(), Catch::Contains("no OpenCL runtime"));
  Run csv = run_peakprobe_env(kNoRuntime, "gpu --quick --csv -");
  REQUIRE(csv.rc == 0);
  CHECK_THAT(csv.out, Catch::StartsWith("device,name,section,what,width,value,unit,status,reason\n") &&
                          Catch::Contains(",skipped,"));
  Run listed = run_peakprobe_env(kNoRuntime, "gpu list --json -");
  REQUIRE(listed.rc == 0);
  CHECK(nlohmann::json::parse(listed.out) == nlohmann::json({{"schema", "peakprobe-gpu/1"}, {"devices", nlohmann::json::array()}}));
  CHECK_THAT(listed.err, Catch::Contains("no OpenCL runtime"));
  Run quiet = run_peakprobe_env(kNoRuntime, "--quiet gpu list");
  CHECK(quiet.rc == 0);
  CHECK(quiet.err.empty());
  CHECK_THAT(quiet.out, Catch::Contains("no OpenCL device"));
}

TEST_CASE("gpu: a --device that names no device is refused, by index or by name", "[main][gpu]") {
  const Run listed = run_peakprobe("gpu list --json -");
  REQUIRE(listed.rc == 0);
  const size_t devices = nlohmann::json::parse(listed.out)["devices"].size();
  if (devices == 0) PP_SKIP("no OpenCL device here");
  check_refused({
      {"gpu --device " + std::to_string(devices), "--device " + std::to_string(devices) + ": there are " +
                                                      std::to_string(devices) + " OpenCL devices"},
      {"gpu --device zz-names-no-device", "--device 'zz-names-no-device' names no OpenCL device"},
  });
}

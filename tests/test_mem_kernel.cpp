// The memory kernel table as every ISA shares it (asm/mem_kernel.hpp): each kernel named once and
// found by its name, an unknown name answered with the whole list, and the stream counts the
// bandwidth arithmetic relies on (bytes moved = (loads + stores) x array_step per iteration; the
// buffer split in `arrays` parts) matching what each kernel does. Also the two wrappers that hand a
// generated kernel out with its code kept alive, fed a plain C++ function: nothing is generated here.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "asm/mem_kernel.hpp"

using namespace peakprobe;
using isa::MemKernel;

namespace {

struct Streams {
  int arrays, loads, stores;
  bool nontemporal;
};

// What each kernel does, per element position (a is the destination, or the source for load):
//   load   reads a                  1 array, 1 load
//   store  writes a                 1 array, 1 store
//   copy   a = b                    2 arrays, 1 load, 1 store
//   triad  a = b + s * c            3 arrays, 2 loads, 1 store
//   update a = s * a (in place)     1 array read and written: 1 load, 1 store
// and the _nt variants the same with non-temporal stores.
const std::map<std::string, Streams>& expected_streams() {
  static const std::map<std::string, Streams> m = {
      {"load", {1, 1, 0, false}},     {"store", {1, 0, 1, false}},   {"copy", {2, 1, 1, false}},
      {"triad", {3, 2, 1, false}},    {"update", {1, 1, 1, false}},  {"store_nt", {1, 0, 1, true}},
      {"copy_nt", {2, 1, 1, true}},   {"triad_nt", {3, 2, 1, true}},
  };
  return m;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Stand-ins for generated code: the wrappers only store and call the pointer.
int g_mem_calls = 0;
void fake_mem_kernel(uint64_t, uint64_t, void*, void*, void*) { ++g_mem_calls; }
void fake_chase(uint64_t, void**) {}

}  // namespace

TEST_CASE("mem kernel table: every kernel once, under a unique name", "[mem_kernel]") {
  const auto& all = isa::mem_kernels();
  std::set<std::string> names;
  std::set<MemKernel> kernels;
  for (const auto& k : all) {
    REQUIRE(k.name != nullptr);
    CHECK(std::string(k.name) != "");
    names.insert(k.name);
    kernels.insert(k.kernel);
  }
  CHECK(names.size() == all.size());
  CHECK(kernels.size() == all.size());
  // Every enumerator has its row (the enum's last is triad_nt).
  for (MemKernel k : {MemKernel::load, MemKernel::store, MemKernel::copy, MemKernel::triad, MemKernel::update,
                      MemKernel::store_nt, MemKernel::copy_nt, MemKernel::triad_nt})
    CHECK(kernels.count(k) == 1);
  CHECK(all.size() == 8);
  // The table is a single static one: its address does not change between calls.
  CHECK(&isa::mem_kernels() == &all);
}

TEST_CASE("mem kernel table: find_mem_kernel returns each kernel's own row by its name", "[mem_kernel]") {
  for (const auto& k : isa::mem_kernels()) {
    INFO(k.name);
    auto found = isa::find_mem_kernel(k.name);
    REQUIRE(found.ok());
    CHECK(found->kernel == k.kernel);
    CHECK(std::string(found->name) == k.name);
    CHECK(found->arrays == k.arrays);
    CHECK(found->loads == k.loads);
    CHECK(found->stores == k.stores);
    CHECK(found->nontemporal == k.nontemporal);
  }
}

TEST_CASE("mem kernel table: an unknown name is an error that lists every known name", "[mem_kernel]") {
  std::vector<std::string> names;
  for (const auto& k : isa::mem_kernels()) names.push_back(k.name);
  // Near misses must not match: no case folding, no trimming, no prefix or suffix match.
  for (const std::string bad : {"stream", "", "Load", "load ", " copy", "loa", "loads", "triad_", "update_nt",
                                "load_nt", "nt"}) {
    INFO("'" << bad << "'");
    auto r = isa::find_mem_kernel(bad);
    REQUIRE_FALSE(r.ok());
    const std::string& e = r.error();
    CHECK(e.find("unknown kernel '" + bad + "'") != std::string::npos);
    // The list after "one of: " is exactly the table's names, in its order.
    const auto open = e.find("one of: "), close = e.rfind(')');
    REQUIRE(open != std::string::npos);
    REQUIRE(close != std::string::npos);
    REQUIRE(close > open);
    std::vector<std::string> listed;
    std::string rest = e.substr(open + 8, close - open - 8);
    for (size_t at = 0;;) {
      const auto comma = rest.find(", ", at);
      listed.push_back(rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) break;
      at = comma + 2;
    }
    CHECK(listed == names);
  }
}

TEST_CASE("mem kernel table: stream counts match what each kernel reads and writes", "[mem_kernel]") {
  const auto& want = expected_streams();
  REQUIRE(isa::mem_kernels().size() == want.size());
  for (const auto& k : isa::mem_kernels()) {
    INFO(k.name);
    const auto it = want.find(k.name);
    REQUIRE(it != want.end());
    CHECK(k.arrays == it->second.arrays);
    CHECK(k.loads == it->second.loads);
    CHECK(k.stores == it->second.stores);
    CHECK(k.nontemporal == it->second.nontemporal);
    // Shape rules that hold whatever the table says: a is the only destination, every array is
    // read or written (update reads and writes its one array: the only kernel where they overlap).
    CHECK(k.stores <= 1);
    CHECK(k.loads + k.stores >= 1);
    CHECK(k.arrays == k.loads + k.stores - (k.kernel == MemKernel::update ? 1 : 0));
  }
}

TEST_CASE("mem kernel table: non-temporal kernels are flagged, store, and mirror their cached twin",
          "[mem_kernel]") {
  int flagged = 0;
  for (const auto& k : isa::mem_kernels()) {
    const std::string name = k.name;
    INFO(name);
    CHECK(k.nontemporal == ends_with(name, "_nt"));
    if (!k.nontemporal) continue;
    ++flagged;
    // A non-temporal hint applies to stores: a kernel flagged so must store.
    CHECK(k.stores > 0);
    // Same streams as the kernel without the suffix: only the kind of store differs.
    auto twin = isa::find_mem_kernel(name.substr(0, name.size() - 3));
    REQUIRE(twin.ok());
    CHECK_FALSE(twin->nontemporal);
    CHECK(twin->arrays == k.arrays);
    CHECK(twin->loads == k.loads);
    CHECK(twin->stores == k.stores);
  }
  CHECK(flagged == 3);
}

TEST_CASE("mem kernel code: own_mem_kernel keeps the function and its description", "[mem_kernel]") {
  auto info = isa::find_mem_kernel("triad_nt");
  REQUIRE(info.ok());
  // A block of nullptr: the JitFunction owns no runtime memory, so releasing it frees nothing.
  isa::JitFunction fn(reinterpret_cast<void*>(&fake_mem_kernel), 123, nullptr);
  auto code = isa::own_mem_kernel(std::move(fn), *info, 256, 96, 128);
  CHECK(code.fn == &fake_mem_kernel);
  CHECK(code.info.kernel == MemKernel::triad_nt);
  CHECK(std::string(code.info.name) == "triad_nt");
  CHECK(code.info.arrays == info->arrays);
  CHECK(code.info.loads == info->loads);
  CHECK(code.info.stores == info->stores);
  CHECK(code.info.nontemporal);
  CHECK(code.width_bits == 256);
  CHECK(code.bytes_per_iteration == 96);
  CHECK(code.array_step == 128);
  // The owner held is the function handed in (its size travelled with it).
  REQUIRE(code.code != nullptr);
  const auto* owner = static_cast<const isa::JitFunction*>(code.code.get());
  CHECK(owner->as<void*>() == reinterpret_cast<void*>(&fake_mem_kernel));
  CHECK(owner->code_size() == 123);
  // A copy of the kernel shares the code; the code lives while either does.
  auto copy = code;
  CHECK(code.code.use_count() == 2);
  g_mem_calls = 0;
  copy.fn(1, 1, nullptr, nullptr, nullptr);
  CHECK(g_mem_calls == 1);
}

TEST_CASE("mem kernel code: own_chase keeps the function and its unroll", "[mem_kernel]") {
  isa::JitFunction fn(reinterpret_cast<void*>(&fake_chase), 40, nullptr);
  auto chase = isa::own_chase(std::move(fn), 7);
  CHECK(chase.fn == &fake_chase);
  CHECK(chase.unroll == 7);
  REQUIRE(chase.code != nullptr);
  const auto* owner = static_cast<const isa::JitFunction*>(chase.code.get());
  CHECK(owner->code_size() == 40);
  CHECK(owner->as<isa::ChaseFn>() == &fake_chase);
}

#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "memory/mem_buffer.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {
constexpr size_t MiB = size_t(1) << 20;
}

TEST_CASE("mem buffer: 2 MiB aligned, writable, of the size asked", "[memory]") {
  MemBuffer b(3 * MiB, MemBuffer::Pages::huge);
  REQUIRE(b.ok());
  CHECK(b.size() == 3 * MiB);
  CHECK(b.pages() == MemBuffer::Pages::huge);
  CHECK(reinterpret_cast<uintptr_t>(b.data()) % (2 * MiB) == 0);
  std::memset(b.data(), 1, b.size());
  CHECK(b.data()[b.size() - 1] == 1);
}

TEST_CASE("reuse_or_map: a kept buffer serves requests from half its size to its size", "[memory]") {
  std::unique_ptr<MemBuffer> slot;
  MemBuffer& first = reuse_or_map(slot, 8 * MiB, MemBuffer::Pages::huge);
  REQUIRE(first.ok());
  const MemBuffer* kept = slot.get();
  SECTION("the same size or a little less: the same mapping") {
    CHECK(&reuse_or_map(slot, 8 * MiB, MemBuffer::Pages::huge) == kept);
    CHECK(&reuse_or_map(slot, 4 * MiB, MemBuffer::Pages::huge) == kept);
  }
  SECTION("larger: a new mapping of the new size") {
    MemBuffer& b = reuse_or_map(slot, 9 * MiB, MemBuffer::Pages::huge);
    CHECK(b.ok());
    CHECK(b.size() == 9 * MiB);
  }
  SECTION("less than half: a new mapping, the large one is not held") {
    MemBuffer& b = reuse_or_map(slot, 4 * MiB - 4096, MemBuffer::Pages::huge);
    CHECK(b.size() == 4 * MiB - 4096);
  }
  SECTION("other pages: a new mapping with those pages") {
    MemBuffer& b = reuse_or_map(slot, 8 * MiB, MemBuffer::Pages::small);
    CHECK(b.pages() == MemBuffer::Pages::small);
    CHECK(b.size() == 8 * MiB);
  }
}

TEST_CASE("mem buffer: 4 KiB pages are resident once mapped, before any touch", "[memory]") {
  // The kernel populates the pages in one call (MADV_POPULATE_WRITE, Linux 5.14): a probe's first
  // pass then pays no fault per page. Where the kernel refuses it, the pages fault in on touch.
  constexpr size_t kBytes = 8 * MiB;
  MemBuffer b(kBytes, MemBuffer::Pages::small);
  REQUIRE(b.ok());
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident(kBytes / page);
  REQUIRE(mincore(b.data(), kBytes, resident.data()) == 0);
  size_t in = 0;
  for (unsigned char r : resident) in += r & 1;
  // Whether this kernel populates at all: it may refuse the advice, and an emulator (qemu-user)
  // answers 0 without populating anything.
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(probe != MAP_FAILED);
  unsigned char probe_resident = 0;
  const bool populate_works = madvise(probe, page, 23 /* MADV_POPULATE_WRITE */) == 0 &&
                              mincore(probe, page, &probe_resident) == 0 && (probe_resident & 1);
  munmap(probe, page);
  if (!populate_works) PP_SKIP("this kernel cannot populate a mapping (MADV_POPULATE_WRITE, Linux 5.14)");
  CHECK(in == resident.size());
}

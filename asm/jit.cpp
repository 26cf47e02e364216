#include "asm/jit_runtime.hpp"

#include <cstring>
#include <mutex>
#include <string>

namespace peakprobe::isa {
namespace {

template <typename T>
void fill_with(uint8_t* out, T value) {
  for (size_t i = 0; i < 64 / sizeof(T); ++i) std::memcpy(out + i * sizeof(T), &value, sizeof(T));
}

asmjit::JitRuntime& runtime() {
  static asmjit::JitRuntime rt;
  return rt;
}
std::mutex& runtime_mutex() {
  static std::mutex m;
  return m;
}

constexpr size_t kCodePage = 4096;
thread_local bool t_page_aligned = false;

}  // namespace

PageAlignedCode::PageAlignedCode() : outer_(t_page_aligned) { t_page_aligned = true; }
PageAlignedCode::~PageAlignedCode() { t_page_aligned = outer_; }

void fill_data_pattern(uint8_t out[64], const std::string& dtype) {
  if (dtype == "f64") fill_with<double>(out, 1.0);
  else if (dtype == "f32") fill_with<float>(out, 1.0f);
  else if (dtype == "f16") fill_with<uint16_t>(out, 0x3C00);
  else if (dtype == "bf16") fill_with<uint16_t>(out, 0x3F80);
  // Integers of a width: 1 in each element (x87 fimul and fidiv multiply and divide by it; a byte
  // pattern's 257 or 16843009 sends st(0) to infinity or zero within a few thousand instructions).
  else if (dtype == "i64") fill_with<uint64_t>(out, 1);
  else if (dtype == "i32") fill_with<uint32_t>(out, 1);
  else if (dtype == "i16") fill_with<uint16_t>(out, 1);
  else fill_with<uint8_t>(out, 1);
}

JitFunction& JitFunction::operator=(JitFunction&& o) noexcept {
  if (this != &o) {
    this->~JitFunction();
    fn_ = o.fn_;
    block_ = o.block_;
    size_ = o.size_;
    o.fn_ = nullptr;
    o.block_ = nullptr;
  }
  return *this;
}

JitFunction::~JitFunction() {
  if (block_) {
    std::lock_guard<std::mutex> lock(runtime_mutex());
    runtime().release(block_);
    fn_ = block_ = nullptr;
  }
}

Expected<JitFunction> add_to_runtime(asmjit::CodeHolder& code) {
  auto failed = [](asmjit::Error err) {
    return make_error(std::string("cannot map generated code: ") + asmjit::DebugUtils::errorAsString(err));
  };
  // Without an EmitErrors no one would know whether asmjit dropped an instruction: such code is
  // refused too (isa::HostCode sets one for every generator).
  const auto* errors = dynamic_cast<const EmitErrors*>(code.errorHandler());
  if (!errors)
    return make_error("generated code without an error handler (isa::HostCode sets one): an instruction asmjit "
                      "could not encode may be missing from it");
  if (errors->failed()) return make_error("generated code could not be encoded: " + errors->message());
  std::lock_guard<std::mutex> lock(runtime_mutex());
  if (!t_page_aligned) {
    void* fn = nullptr;
    if (asmjit::Error err = runtime().add(&fn, &code)) return failed(err);
    return JitFunction(fn, code.codeSize(), fn);
  }
  // What JitRuntime::add does, into a block one page larger, from its first page boundary on.
  if (asmjit::Error err = code.flatten()) return failed(err);
  if (asmjit::Error err = code.resolveUnresolvedLinks()) return failed(err);
  const size_t estimated = code.codeSize();
  if (estimated == 0) return failed(asmjit::kErrorNoCodeGenerated);
  void* rx = nullptr;
  void* rw = nullptr;
  if (asmjit::Error err = runtime().allocator()->alloc(&rx, &rw, estimated + kCodePage)) return failed(err);
  const size_t into_page = uintptr_t(rx) % kCodePage;
  const size_t offset = into_page ? kCodePage - into_page : 0;
  uint8_t* start = static_cast<uint8_t*>(rx) + offset;
  asmjit::Error err = code.relocateToBase(uintptr_t(start));
  if (!err) {
    asmjit::VirtMem::ProtectJitReadWriteScope scope(start, code.codeSize());  // flushes the i-cache on leaving
    err = code.copyFlattenedData(static_cast<uint8_t*>(rw) + offset, code.codeSize(),
                                 asmjit::CopySectionFlags::kPadSectionBuffer);
  }
  if (err) {
    runtime().allocator()->release(rx);
    return failed(err);
  }
  return JitFunction(start, code.codeSize(), rx);
}

const asmjit::Environment& jit_environment() { return runtime().environment(); }

}  // namespace peakprobe::isa

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

}  // namespace

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
    size_ = o.size_;
    o.fn_ = nullptr;
  }
  return *this;
}

JitFunction::~JitFunction() {
  if (fn_) {
    std::lock_guard<std::mutex> lock(runtime_mutex());
    runtime().release(fn_);
    fn_ = nullptr;
  }
}

Expected<JitFunction> add_to_runtime(asmjit::CodeHolder& code) {
  void* fn = nullptr;
  std::lock_guard<std::mutex> lock(runtime_mutex());
  if (asmjit::Error err = runtime().add(&fn, &code))
    return make_error(std::string("cannot map generated code: ") + asmjit::DebugUtils::errorAsString(err));
  return JitFunction(fn, code.codeSize());
}

const asmjit::Environment& jit_environment() { return runtime().environment(); }

}  // namespace peakprobe::isa

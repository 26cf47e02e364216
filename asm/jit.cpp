#include "asm/jit_runtime.hpp"

#include <mutex>
#include <string>

namespace peakprobe::isa {
namespace {

asmjit::JitRuntime& runtime() {
  static asmjit::JitRuntime rt;
  return rt;
}
std::mutex& runtime_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

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

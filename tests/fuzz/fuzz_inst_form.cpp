// The resolver (asm/x86/inst_form): text -> asmjit instruction form, with suggestions for unknown
// mnemonics. A resolved form has one role and one immediate slot per operand.
#include "asm/x86/inst_form.hpp"
#include "fuzz_util.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Suggestions compare the mnemonic with every asmjit name (edit distance): keep inputs to the
  // length of real instruction text so that each run stays fast.
  if (size > 256) return 0;
  const std::string text = fuzz::text_of(data, size);
  auto form = x86::resolve_inst(text);
  if (form) {
    if (form->roles.size() != form->text.operands.size()) fuzz::fail("roles do not match operands", form->display);
    if (form->imms.size() != form->text.operands.size()) fuzz::fail("immediates do not match operands", form->display);
    auto again = x86::resolve_inst(form->display);
    if (!again) fuzz::fail("a resolved form's display text does not resolve", form->display + ": " + again.error());
  }
  return 0;
}

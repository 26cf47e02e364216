// Instruction text in Intel notation (asm/x86/inst_text): any bytes either parse or give an error;
// a parsed text's canonical spelling parses again to the same spelling.
#include "asm/x86/inst_text.hpp"
#include "fuzz_util.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::text_of(data, size);
  auto parsed = x86::parse_inst_text(text);
  if (parsed) {
    const std::string canonical = parsed->canonical();
    auto again = x86::parse_inst_text(canonical);
    if (!again) fuzz::fail("canonical text does not parse", canonical + ": " + again.error());
    if (again->canonical() != canonical) fuzz::fail("canonical text is not stable", canonical + " -> " + again->canonical());
    if (again->operands.size() != parsed->operands.size()) fuzz::fail("operand count changed", canonical);
  }
  auto kind = x86::parse_operand_kind(text);
  if (kind && kind->text.empty()) fuzz::fail("operand kind without text", text);
  return 0;
}

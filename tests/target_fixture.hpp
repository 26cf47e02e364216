// Shared by the ISA-neutral tests that need instruction texts or CPUs: they ask the host's target
// (asm/target.hpp) for its own forms and features instead of spelling one ISA's.
#pragma once
#include <algorithm>
#include <string>

#include "asm/target.hpp"
#include "peakprobe/cpu_info.hpp"

namespace peakprobe::test {

inline const isa::Target& target() { return isa::host_target(); }

// `text` with one letter of its mnemonic dropped (the middle one): a typo the target's parser must
// refuse, naming the mnemonic that was meant among its nearest names.
inline std::string misspelled(const std::string& text) {
  const auto form = target().resolve(text);
  if (!form) return text;
  const std::string& m = form->mnemonic;
  const size_t at = text.find(m);
  if (at == std::string::npos || m.size() < 2) return text;
  std::string typo = m;
  typo.erase(typo.size() / 2, 1);
  return text.substr(0, at) + typo + text.substr(at + m.size());
}

// The mnemonic of one of the target's forms.
inline std::string mnemonic_of(const std::string& text) {
  const auto form = target().resolve(text);
  return form ? form->mnemonic : std::string();
}

// A synthetic CPU with every feature any form of the target needs: the widest kernels and every
// dtype, whatever the machine running the test has.
inline CpuInfo cpu_with_every_feature() {
  static const CpuInfo c = [] {
    CpuInfo cpu;
    for (const auto& f : target().all_forms())
      for (const auto& feature : f.features)
        if (std::find(cpu.features.begin(), cpu.features.end(), feature) == cpu.features.end())
          cpu.features.push_back(feature);
    std::sort(cpu.features.begin(), cpu.features.end());
    return cpu;
  }();
  return c;
}

}  // namespace peakprobe::test

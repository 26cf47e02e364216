# The ISA registration table: which asm/<isa>/ folder, catalog and test folder a build uses.
# Exactly one ISA is compiled in, the host's (CPUID or XGETBV code cannot compile for another
# processor), and PEAKPROBE_ISAS lists every registered one for the seam test (tests/test_isa_seam.cpp):
# nothing outside asm/<isa>/ and tests/<isa>/ may name a registered ISA's registers or mnemonics.
# Adding an ISA: a folder asm/<isa>/ with the same file stems as asm/x86/, probes/<isa>.catalog and
# .sets, tests/<isa>/, and one line below.
set(PEAKPROBE_ISAS x86)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(PEAKPROBE_ISA x86)
else()
  message(FATAL_ERROR "peakprobe ${PROJECT_VERSION} generates code for these ISAs: ${PEAKPROBE_ISAS} "
                      "(x86-64); this is ${CMAKE_SYSTEM_PROCESSOR}.")
endif()

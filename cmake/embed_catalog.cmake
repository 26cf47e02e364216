# Writes OUT: a C++ file holding each catalog in INPUTS as a raw string, with its file name,
# so the binary carries its default catalog and reports errors against the original file.
set(body "#include \"catalog/embedded_catalog.hpp\"\nnamespace peakprobe {\nconst std::vector<EmbeddedCatalog>& embedded_catalogs() {\n  static const std::vector<EmbeddedCatalog> all = {\n")
string(REPLACE "|" ";" INPUTS "${INPUTS}")
foreach(in IN LISTS INPUTS)
  file(READ ${in} text)
  get_filename_component(name ${in} NAME)
  string(APPEND body "    {\"probes/${name}\", R\"pp_catalog(${text})pp_catalog\"},\n")
endforeach()
string(APPEND body "  };\n  return all;\n}\n}  // namespace peakprobe\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)

// The one Catch2 main for the whole suite; each other file here tests one source file.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

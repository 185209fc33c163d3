#include "gpf/util/enum_names.hpp"

#include <catch2/catch.hpp>

namespace {
enum class Colour { red, green, blue };
constexpr auto k_colours = gpf::enum_names<Colour::blue>({"red", "green", "blue"});
} // namespace

TEST_CASE("enum name tables map both ways") {
  static_assert(k_colours(Colour::green) == "green");
  CHECK(k_colours.parse("blue") == Colour::blue);
  CHECK_FALSE(k_colours.parse("purple"));
}

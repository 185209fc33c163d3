#include "gpf/util/json_read.hpp"

#include <catch2/catch.hpp>

#include <cstdint>

using gpf::JsonIn;
using gpf::Result;
using Json = nlohmann::json;

namespace {
Result<void> read_all(const JsonIn& o, int& n, std::string& s, std::vector<bool>& flags) {
  TRY(o.object());
  TRY(o["n"].get(n));
  TRY(o["s"].get(s));
  TRY(o["flags"].get(flags));
  return {};
}

std::string error_of(const char* text) {
  int n = 0;
  std::string s;
  std::vector<bool> flags;
  const auto r = read_all(JsonIn(Json::parse(text)), n, s, flags);
  return r ? "" : r.error().message;
}
} // namespace

TEST_CASE("json_read: a mistyped member is an error naming its path") {
  CHECK(error_of(R"({"n": 1, "s": "x", "flags": [true]})").empty());
  CHECK(error_of("[]") == "the document is not an object");
  CHECK(error_of(R"({"n": "1"})") == "n is not an integer");
  CHECK(error_of(R"({"n": 1.5})") == "n is not an integer");
  CHECK(error_of(R"({"n": 3000000000})") == "n is not an integer"); // outside int
  CHECK(error_of(R"({"s": 3})") == "s is not a string");
  CHECK(error_of(R"({"flags": true})") == "flags is not an array");
  CHECK(error_of(R"({"flags": [true, 1]})") == "flags[1] is not true or false");
  CHECK(error_of(R"({"flags": [null]})") == "flags[0] is not true or false");

  const Json doc = Json::parse(R"({"a": {"b": [{"c": -1}]}})");
  unsigned c = 7;
  const auto r = JsonIn(doc)["a"]["b"][0]["c"].get(c);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "a.b[0].c is not a non-negative integer");
  CHECK(c == 7);
}

TEST_CASE("json_read: missing and null keep the default") {
  const Json doc = Json::parse(R"({"n": null, "d": 2.5})");
  int n = 4;
  std::optional<std::uint64_t> big;
  double d = 0;
  double missing = 9;
  REQUIRE(JsonIn(doc)["n"].get(n));
  REQUIRE(JsonIn(doc)["big"].get(big));
  REQUIRE(JsonIn(doc)["d"].get(d));
  REQUIRE(JsonIn(doc)["nothing"]["deeper"].get(missing));
  CHECK(n == 4);
  CHECK_FALSE(big);
  CHECK(d == 2.5);
  CHECK(missing == 9);
  double negative = 0;
  CHECK_FALSE(JsonIn(Json::parse(R"({"d": -1})"))["d"].get(negative));
}

TEST_CASE("json_read: text is made valid UTF-8 and cut at the reader's cap") {
  const Json doc = Json::parse(R"({"s": "abcdefghijklmnopqrstuvwxyz"})");
  std::string whole;
  std::string cut;
  REQUIRE(JsonIn(doc)["s"].get(whole));
  REQUIRE(JsonIn(doc, "", 8)["s"].get(cut));
  CHECK(whole == "abcdefghijklmnopqrstuvwxyz");
  CHECK(cut.size() < whole.size());
  CHECK(JsonIn(doc)["s"].lenient<int>() == std::nullopt);
  CHECK(JsonIn(doc)["s"].lenient<std::string>() == whole);
}

TEST_CASE("TRY_ASSIGN passes the value on and the error up") {
  const auto half = [](int v) -> Result<int> {
    if (v % 2) {
      return gpf::Error{"odd"};
    }
    return v / 2;
  };
  const auto quarter = [&](int v) -> Result<int> {
    TRY_ASSIGN(const int h, half(v));
    TRY_ASSIGN(const int q, half(h));
    return q;
  };
  CHECK(*quarter(12) == 3);
  REQUIRE_FALSE(quarter(6));
  CHECK(quarter(6).error().message == "odd");
}

// libFuzzer target: the redactor of `snapshot --redact` on any text.
// Properties: no crash; every line stays one line; once a text's names are learned, redacting it
// twice gives the same bytes (tokens are stable), and a second redactor gives the same bytes too.
#include "fuzz_support.hpp"

#include "gpf/capture/redactor.hpp"

#include <algorithm>

GPF_FUZZ_TARGET(redactor) {
  const auto text = gpf::fuzz::as_text(data, size);
  gpf::Redactor one({"node17.example", "nouveau"});
  one.learn(text);
  const std::string first = one.apply(text);
  gpf::fuzz::require(std::count(first.begin(), first.end(), '\n') ==
                         std::count(text.begin(), text.end(), '\n'),
                     "every line stays one line");
  gpf::fuzz::require(one.apply(text) == first, "the same text gets the same tokens again");
  gpf::Redactor two({"node17.example", "nouveau"});
  two.learn(text);
  gpf::fuzz::require(two.apply(text) == first, "redaction is deterministic");
  return 0;
}

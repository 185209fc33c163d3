// The one-way words from the parent to its children (probes/child/runner.hpp): Gate and Letter.
#include "probes/child/runner.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <optional>
#include <string>
#include <thread>

TEST_CASE("gate: a child's wait ends when the parent releases it, and stays released") {
  gpf::child::Gate gate;
  REQUIRE(gate.usable());
  CHECK_FALSE(gate.wait_for(std::chrono::milliseconds(20)));
  gate.release();
  gate.release(); // once is enough; again does nothing
  CHECK(gate.wait_for(std::chrono::milliseconds(0)));
  CHECK(gate.wait_for(std::chrono::milliseconds(0))); // nobody consumes the word
}

TEST_CASE("letter: a line the parent sends after the fork reaches the child, once") {
  using gpf::child::Clock;
  SECTION("across a fork") {
    gpf::child::Letter letter;
    REQUIRE(letter.usable());
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const auto line = letter.receive(Clock::now() + std::chrono::seconds(5));
      ::_exit(line == std::optional<std::string>("0:3:1 1:0:0") ? 0 : 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // the child waits first
    CHECK(letter.send("0:3:1 1:0:0"));
    CHECK_FALSE(letter.send("again")); // said once
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  SECTION("nothing sent: the wait ends at its time, not before") {
    gpf::child::Letter letter;
    const auto start = Clock::now();
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const auto line = letter.receive(Clock::now() + std::chrono::milliseconds(200));
      ::_exit(line ? 1 : 0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(Clock::now() - start >= std::chrono::milliseconds(200));
  }
  SECTION("the writer closed without a line: no line, at once") {
    gpf::child::Letter letter;
    const auto start = Clock::now();
    CHECK_FALSE(letter.receive(Clock::now() + std::chrono::seconds(5))); // closes the write end
    CHECK(Clock::now() - start < std::chrono::seconds(2));
  }
  SECTION("a line with a newline in it or longer than one atomic write is refused") {
    gpf::child::Letter a;
    CHECK_FALSE(a.send("two\nlines"));
    gpf::child::Letter b;
    CHECK_FALSE(b.send(std::string(PIPE_BUF, 'x')));
  }
}

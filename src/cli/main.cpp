#include "gpf/cli/cli.hpp"

int main(int argc, char** argv) { return gpf::run_cli(argc, argv); }

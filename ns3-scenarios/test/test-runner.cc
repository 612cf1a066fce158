// SPDX-License-Identifier: GPL-2.0-only
// ns-3's test runner over CellGym's suites: cellgym-test-runner [--suite=NAME] [--verbose].
#include "ns3/test.h"

int
main(int argc, char* argv[])
{
    return ns3::TestRunner::Run(argc, argv);
}

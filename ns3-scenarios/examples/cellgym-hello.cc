// SPDX-License-Identifier: GPL-2.0-only
// Smallest program: checks that the wheel links. Prints the ns-3 version.
#include "ns3opengym.pb.h"

#include "ns3/core-module.h"
#include "ns3/lte-module.h"

int
main(int argc, char* argv[])
{
    ns3::CommandLine cmd(__FILE__);
    cmd.Parse(argc, argv);
    ns3opengym::SimInitAck ack;
    ack.set_done(true);
    ns3::Ptr<ns3::LteHelper> lte = ns3::CreateObject<ns3::LteHelper>();
    std::cout << "ok " << ack.done() << std::endl;
    return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
// The congestion controls a sender is created with, by name (cellgym-cca-table.h).
#include "cellgym-cca-table.h"

#include "tcp-constrate.h"
#include "tcp-pbe.h"
#include "tcp-rcp.h"
#include "tcp-xcp.h"
#include "tcp-xcpr.h"
#include "tcp-xrc.h"

namespace ns3
{

const std::map<std::string, CcaType>&
CcaTypes()
{
    // The explicit senders are created by name and used through CellGymExplicitSender alone:
    // naming their TypeIds here links their code into every program that has senders (a static
    // library gives a program only the objects it refers to).
    static const TypeId explicitSenders[] = {TcpXrc::GetTypeId(),
                                             TcpXcp::GetTypeId(),
                                             TcpRcp::GetTypeId(),
                                             TcpXcpr::GetTypeId(),
                                             TcpPbe::GetTypeId(),
                                             TcpConstRate::GetTypeId()};
    (void)explicitSenders;
    static const std::map<std::string, CcaType> types{
        {"cubic", {"ns3::TcpCubic"}},
        {"newreno", {"ns3::TcpNewReno"}},
        {"linuxreno", {"ns3::TcpLinuxReno"}},
        {"bbr", {"ns3::TcpBbr", CcaPacing::ALWAYS}},
        {"illinois", {"ns3::TcpIllinois"}},
        {"veno", {"ns3::TcpVeno"}},
        {"vegas", {"ns3::TcpVegas"}},
        {"bic", {"ns3::TcpBic"}},
        {"htcp", {"ns3::TcpHtcp"}},
        {"hybla", {"ns3::TcpHybla"}},
        {"highspeed", {"ns3::TcpHighSpeed"}},
        {"scalable", {"ns3::TcpScalable"}},
        {"westwoodplus", {"ns3::TcpWestwoodPlus"}},
        {"yeah", {"ns3::TcpYeah"}},
        {"lp", {"ns3::TcpLp"}},
        {"ledbat", {"ns3::TcpLedbat"}},
        {"dctcp", {"ns3::TcpDctcp"}},
        {"xrc", {"ns3::TcpXrc"}},
        {"xcp", {"ns3::TcpXcp"}},
        {"rcp", {"ns3::TcpRcp"}},
        {"xcpr", {"ns3::TcpXcpr"}},
        {"pbecc", {"ns3::TcpPbe"}},
        {"constrate", {"ns3::TcpConstRate"}}, // test-only (tests/test_controller_recipe.py)
        {"agent", {"ns3::CellGymAgentCongestionOps", CcaPacing::COMMANDED}},
    };
    return types;
}

/// How the controller `cca` paces (CcaPacing::OWN for a name outside the table).
CcaPacing
PacingOf(const std::string& cca)
{
    auto it = CcaTypes().find(cca);
    return it == CcaTypes().end() ? CcaPacing::OWN : it->second.pacing;
}

} // namespace ns3

// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-udp-onoff.h"

#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CellGymUdpOnOff);

TypeId
CellGymUdpOnOff::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CellGymUdpOnOff")
                            .SetParent<Application>()
                            .SetGroupName("CellGym")
                            .AddConstructor<CellGymUdpOnOff>();
    return tid;
}

CellGymUdpOnOff::CellGymUdpOnOff() = default;

void
CellGymUdpOnOff::Setup(const InetSocketAddress& to,
                       double rateMbps,
                       double onS,
                       double offS,
                       const std::vector<double>& drawnPeriodsS)
{
    m_to = to;
    m_rateMbps = rateMbps;
    m_onS = onS;
    m_offS = offS;
    m_drawn = drawnPeriodsS;
    m_next = 0;
}

uint64_t
CellGymUdpOnOff::GetSentBytes() const
{
    return m_sentBytes;
}

double
CellGymUdpOnOff::GetOnSeconds() const
{
    return m_onSeconds + (m_on ? (Simulator::Now() - m_onSince).GetSeconds() : 0.0);
}

double
CellGymUdpOnOff::Period(double mean)
{
    // As envs/fastsim/cross_traffic.py: the mean, or the next drawn period (at least 1 us; the
    // draws cover the run, the mean past their end).
    if (m_next >= m_drawn.size())
    {
        return mean;
    }
    return m_drawn[m_next++];
}

void
CellGymUdpOnOff::StartApplication()
{
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_socket->Bind();
    m_socket->Connect(m_to);
    BeginOn();
}

void
CellGymUdpOnOff::StopApplication()
{
    if (m_on)
    {
        m_onSeconds += (Simulator::Now() - m_onSince).GetSeconds();
        m_on = false;
    }
    Simulator::Cancel(m_sendEvent);
    Simulator::Cancel(m_switchEvent);
    if (m_socket)
    {
        m_socket->Close();
    }
}

void
CellGymUdpOnOff::BeginOn()
{
    m_on = true;
    m_onSince = Simulator::Now();
    m_switchEvent = Simulator::Schedule(Seconds(Period(m_onS)), &CellGymUdpOnOff::EndOn, this);
    Send();
}

void
CellGymUdpOnOff::EndOn()
{
    m_on = false;
    m_onSeconds += (Simulator::Now() - m_onSince).GetSeconds();
    Simulator::Cancel(m_sendEvent);
    m_switchEvent = Simulator::Schedule(Seconds(Period(m_offS)), &CellGymUdpOnOff::BeginOn, this);
}

void
CellGymUdpOnOff::Send()
{
    if (!m_on || m_rateMbps <= 0)
    {
        return;
    }
    m_socket->Send(Create<Packet>(kPayloadBytes));
    m_sentBytes += kIpBytes;
    m_sendEvent = Simulator::Schedule(
        Seconds(kIpBytes * 8.0 / (m_rateMbps * 1e6)), &CellGymUdpOnOff::Send, this);
}

} // namespace ns3

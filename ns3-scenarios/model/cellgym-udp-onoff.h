// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_UDP_ONOFF_H
#define CELLGYM_UDP_ONOFF_H

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/inet-socket-address.h"
#include "ns3/socket.h"

#include <vector>

namespace ns3
{

/**
 * @brief One ON/OFF UDP source through the wired bottleneck (``ScenarioSpec.udp_*``,
 * docs/xcp-r.md "ns-3"), the fast model's envs/fastsim/cross_traffic.py on real packets.
 *
 * From its start the source is on for an on period, then off for an off period, and so on; the
 * periods are the means themselves (fixed: all sources switch together) or exponential draws
 * with those means, the run's draws (cellgym/draws.py, `--draws`; the fast model takes the
 * same). While on it sends
 * 1500-byte IP packets (1472 bytes of UDP payload) evenly at its rate, without congestion
 * control, retransmission or ACKs; the rate counts IP bytes, as the fast model's does.
 */
class CellGymUdpOnOff : public Application
{
  public:
    static TypeId GetTypeId();
    CellGymUdpOnOff();

    /// Destination, rate while on (Mbit/s of IP bytes), periods (s): the ON, OFF, ON, ...
    /// periods drawn (exponential), or none: the means (fixed).
    void Setup(const InetSocketAddress& to,
               double rateMbps,
               double onS,
               double offS,
               const std::vector<double>& drawnPeriodsS);

    uint64_t GetSentBytes() const; //!< IP bytes sent so far
    double GetOnSeconds() const;   //!< time spent on so far, s

    static constexpr uint32_t kIpBytes = 1500;      //!< one packet's IP bytes
    static constexpr uint32_t kPayloadBytes = 1472; //!< its UDP payload

  private:
    void StartApplication() override;
    void StopApplication() override;
    double Period(double mean);
    void BeginOn();
    void EndOn();
    void Send();

    InetSocketAddress m_to{Ipv4Address::GetAny(), 0};
    double m_rateMbps{0};
    double m_onS{1};
    double m_offS{1};
    std::vector<double> m_drawn; //!< the drawn periods (empty: fixed)
    size_t m_next{0};            //!< the next of them
    Ptr<Socket> m_socket;
    EventId m_sendEvent;
    EventId m_switchEvent;
    bool m_on{false};
    Time m_onSince;
    double m_onSeconds{0};
    uint64_t m_sentBytes{0};
};

} // namespace ns3

#endif // CELLGYM_UDP_ONOFF_H

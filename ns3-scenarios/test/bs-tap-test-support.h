// SPDX-License-Identifier: GPL-2.0-only
// What the base-station tap's and XRC's agent's unit tests share: an S1-U stand-in device whose
// MacRx / MacTx traces a test fires with GTP-U packets, as the eNB's S1-U device does, and a
// made-up radio: 1 ms TTIs, 10 usable resource blocks, and an MCS m carrying 10 x m bytes per
// block (MCS 10: 100 B, MCS 20: 200 B; a TB of b bytes occupies ceil(b / (10 m)) blocks).
#ifndef CELLGYM_BS_TAP_TEST_SUPPORT_H
#define CELLGYM_BS_TAP_TEST_SUPPORT_H

#include "cellgym-bs-tap.h"

#include "ns3/epc-gtpu-header.h"
#include "ns3/error-model.h"
#include "ns3/ipv4-header.h"
#include "ns3/queue.h"
#include "ns3/simple-channel.h"
#include "ns3/simple-net-device.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/traced-callback.h"
#include "ns3/udp-header.h"

#include <cmath>

namespace ns3
{
namespace cellgym_test
{

/// The eNB's S1-U device as the tap sees it: a device whose MacTx / MacRx the test fires.
class TestS1uDevice : public SimpleNetDevice
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CellgymTestS1uDevice")
                                .SetParent<SimpleNetDevice>()
                                .AddConstructor<TestS1uDevice>()
                                .AddTraceSource("MacTx",
                                                "An uplink packet leaves",
                                                MakeTraceSourceAccessor(&TestS1uDevice::macTx),
                                                "ns3::Packet::TracedCallback")
                                .AddTraceSource("MacRx",
                                                "A downlink packet arrives",
                                                MakeTraceSourceAccessor(&TestS1uDevice::macRx),
                                                "ns3::Packet::TracedCallback");
        return tid;
    }

    TracedCallback<Ptr<const Packet>> macTx; //!< fired by the test for uplink packets
    TracedCallback<Ptr<const Packet>> macRx; //!< fired by the test for downlink packets
};

/// A GTP-U packet carrying an inner TCP segment (only its ports) from src:sport to dst:dport.
inline Ptr<Packet>
Gtpu(const char* src, uint16_t sport, const char* dst, uint16_t dport)
{
    uint8_t l4[20] = {};
    l4[0] = static_cast<uint8_t>(sport >> 8);
    l4[1] = static_cast<uint8_t>(sport & 0xff);
    l4[2] = static_cast<uint8_t>(dport >> 8);
    l4[3] = static_cast<uint8_t>(dport & 0xff);
    Ptr<Packet> p = Create<Packet>(l4, sizeof(l4));
    Ipv4Header inner;
    inner.SetSource(Ipv4Address(src));
    inner.SetDestination(Ipv4Address(dst));
    inner.SetProtocol(6);
    inner.SetPayloadSize(sizeof(l4));
    p->AddHeader(inner);
    GtpuHeader gtpu;
    gtpu.SetTeid(1);
    gtpu.SetLength(p->GetSize());
    p->AddHeader(gtpu);
    UdpHeader udp;
    udp.SetSourcePort(2152);
    udp.SetDestinationPort(2152);
    p->AddHeader(udp);
    Ipv4Header outer;
    outer.SetSource(Ipv4Address("10.0.0.1"));
    outer.SetDestination(Ipv4Address("10.0.0.2"));
    outer.SetProtocol(17);
    outer.SetPayloadSize(p->GetSize());
    p->AddHeader(outer);
    return p;
}

inline CellGymBsRadio
TestRadio()
{
    CellGymBsRadio r;
    r.tti = MilliSeconds(1);
    r.ttiS = 1e-3;
    r.usableRbs = 10;
    r.rbsOf = [](int mcs, uint32_t bytes)
    {
        return static_cast<uint32_t>(std::ceil(bytes / (10.0 * mcs)));
    };
    r.bytesOf = [](int mcs, double rbs)
    {
        return mcs < 0 ? 0.0 : rbs * 10.0 * mcs;
    };
    r.queuedByRlc = [](Ptr<const Packet>)
    {
        return true;
    };
    r.rlcPath = "NoRlcHere"; // the drop watch is not exercised (the run ends before 50 ms)
    return r;
}

} // namespace cellgym_test
} // namespace ns3

#endif // CELLGYM_BS_TAP_TEST_SUPPORT_H

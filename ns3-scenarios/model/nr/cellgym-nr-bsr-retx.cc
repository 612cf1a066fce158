// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-nr-bsr-retx.h"

#include "ns3/nr-ue-component-carrier-manager.h"
#include "ns3/nr-ue-net-device.h"
#include "ns3/nr-ue-rrc.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"

namespace ns3
{

namespace
{
/// Keeps a device's proxy alive as long as the device (aggregated to it).
class BsrRetxHolder : public Object
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CellGymNrBsrRetxHolder").SetParent<Object>();
        return tid;
    }

    std::unique_ptr<CellGymNrBsrRetx> proxy;
};

/// The first data radio bearer's logical channel (5G-LENA: the DRB identity plus 2); the
/// signalling bearers' RLC entities are left alone.
constexpr uint8_t kFirstDrbLcid = 3;

/// Whether a report says the channel holds data.
bool
HoldsData(const NrMacSapProvider::BufferStatusReportParameters& r)
{
    return r.txQueueSize > 0 || r.retxQueueSize > 0 || r.statusPduSize > 0;
}
} // namespace

CellGymNrBsrRetx::CellGymNrBsrRetx(NrMacSapProvider* mac, Time interval)
    : m_mac(mac)
    , m_interval(interval)
{
}

CellGymNrBsrRetx::~CellGymNrBsrRetx()
{
    for (auto& [lcid, ch] : m_channels)
    {
        ch.timer.Cancel();
    }
}

void
CellGymNrBsrRetx::TransmitPdu(TransmitPduParameters params)
{
    if (params.lcid >= kFirstDrbLcid)
    {
        // An opportunity: what it leaves behind is the RLC's own timer's until a new PDU
        // cancels that timer, and the new PDU's report makes the channel wait again here.
        Channel& ch = m_channels[params.lcid];
        ch.waiting = false;
        ch.since = Simulator::Now();
        ch.timer.Cancel();
    }
    m_mac->TransmitPdu(params);
}

void
CellGymNrBsrRetx::BufferStatusReport(BufferStatusReportParameters params)
{
    if (params.lcid >= kFirstDrbLcid)
    {
        Channel& ch = m_channels[params.lcid];
        if (!ch.waiting)
        {
            // Data waits from now: the timer counts from here, not from an opportunity long ago.
            ch.since = Simulator::Now();
        }
        ch.last = params;
        ch.waiting = HoldsData(params);
        if (!ch.waiting)
        {
            ch.timer.Cancel();
        }
        else if (!ch.timer.IsPending())
        {
            ch.timer = Simulator::Schedule(ch.since + m_interval - Simulator::Now(),
                                           &CellGymNrBsrRetx::Expire,
                                           this,
                                           params.lcid);
        }
    }
    m_mac->BufferStatusReport(params);
}

void
CellGymNrBsrRetx::Expire(uint8_t lcid)
{
    Channel& ch = m_channels[lcid];
    if (!ch.waiting)
    {
        return;
    }
    BufferStatusReportParameters again = ch.last;
    again.expBsrTimer = true;
    ++m_repeats;
    ch.since = Simulator::Now();
    ch.timer = Simulator::Schedule(m_interval, &CellGymNrBsrRetx::Expire, this, lcid);
    m_mac->BufferStatusReport(again);
}

uint64_t
CellGymNrBsrRetx::Repeats() const
{
    return m_repeats;
}

void
CellGymNrBsrRetx::Install(Ptr<NetDevice> ueDevice, Time interval)
{
    Ptr<NrUeNetDevice> ue = DynamicCast<NrUeNetDevice>(ueDevice);
    NS_ABORT_MSG_UNLESS(ue, "CellGymNrBsrRetx::Install: not an NR UE device");
    PointerValue ccmValue;
    ue->GetAttribute("NrUeComponentCarrierManager", ccmValue);
    Ptr<NrUeComponentCarrierManager> ccm = ccmValue.Get<NrUeComponentCarrierManager>();
    NS_ABORT_MSG_UNLESS(ccm, "CellGymNrBsrRetx::Install: the UE has no carrier manager");
    auto holder = CreateObject<BsrRetxHolder>();
    holder->proxy = std::make_unique<CellGymNrBsrRetx>(ccm->GetNrMacSapProvider(), interval);
    // The RRC hands this provider to every RLC it creates (SRB0 at initialization, the DRBs on
    // connection), so it must be in place before the simulation starts.
    ue->GetRrc()->SetNrMacSapProvider(holder->proxy.get());
    ue->AggregateObject(holder);
}

} // namespace ns3

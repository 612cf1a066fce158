// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_NR_ADAPTER_H
#define CELLGYM_XRC_NR_ADAPTER_H

#include "xrc-enb-agent.h"

#include "ns3/net-device.h"

#include <memory>

namespace ns3
{

/**
 * @brief XRC's agent on a 5G-LENA gNB (the NR adapter; the LTE one is xrc-enb-agent-lte.cc).
 *
 * - Capacity: new transmissions per slot from `NrGnbMac`'s `DlScheduling` trace, which 5G-LENA
 *   fires for new data only (NDI set): HARQ retransmissions are excluded. A slot's resource units
 *   are RB-symbols (the OFDMA scheduler's unit): the BWP's RBs times the slot's 12 data symbols
 *   (14 less one downlink and one uplink control symbol). A transport block's units are found by
 *   inverting the scheduler's own AMC (`NrAmc::CalculateTbSize`), and the idle units are valued
 *   with it at the UE's latest MCS, as on LTE. Retransmissions are not traced: the units they
 *   occupy count as idle.
 * - RLC: buffer status reports, transmit opportunities and PDUs from XrcBwpManagerGnb, which must
 *   have replaced the gNB's manager (XrcBwpManagerGnb::Replace) before UEs attach.
 * - Tail drops: NrRlc's `TxDrop` without an `NrRlcSduStatusTag` on the packet.
 * - The averaging window counts slots: call SetWindowTtis with the window in slots.
 * - With a capacity trace (CellgymNrTraceScheduler sizes the TBs), a slot's units are shares of
 *   its trace bytes, as on LTE: a TB's units are its bytes over the slot's, idle units carry
 *   their share of them whatever the MCS, and each TB counts in the slot it is sent in; a TB
 *   the scheduler withheld (`WithheldTb`) occupies its units and carries nothing.
 */
class XrcNrAdapter
{
  public:
    /**
     * @brief Hook the agent into an installed gNB.
     * @param agent the agent
     * @param gnbDevice the NrGnbNetDevice (one BWP)
     * @param s1uDevice its S1-U device
     * @param trace the cell's capacity per slot when it replays a trace (nullptr: the channel's)
     */
    static void Install(Ptr<XrcEnbAgent> agent,
                        Ptr<NetDevice> gnbDevice,
                        Ptr<NetDevice> s1uDevice,
                        std::shared_ptr<const CapacityTrace> trace = nullptr);

    /**
     * @brief Declare a UE (call after attaching it).
     * @param agent the agent
     * @param ueDevice the NrUeNetDevice
     * @return the UE's index in the agent
     */
    static uint32_t AddUe(Ptr<XrcEnbAgent> agent, Ptr<NetDevice> ueDevice);
};

} // namespace ns3

#endif // CELLGYM_XRC_NR_ADAPTER_H

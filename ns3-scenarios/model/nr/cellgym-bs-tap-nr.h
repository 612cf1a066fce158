// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_BS_TAP_NR_H
#define CELLGYM_BS_TAP_NR_H

#include "cellgym-bs-tap.h"

#include "ns3/net-device.h"

#include <memory>

namespace ns3
{

class CapacityTrace;

/**
 * @brief The base-station tap on a 5G-LENA gNB (the LTE installer is CellGymLteBsTap).
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
 * - XRC's agent averages over slots: XrcEnbAgent::SetWindowTtis takes its window in slots.
 * - With a capacity trace (CellgymNrTraceScheduler sizes the TBs), a slot's units are shares of
 *   its trace bytes, as on LTE: a TB's units are its bytes over the slot's, idle units carry
 *   their share of them whatever the MCS, and each TB counts in the slot it is sent in; a TB
 *   the scheduler withheld (`WithheldTb`) occupies its units and carries nothing.
 */
class CellGymNrBsTap
{
  public:
    /**
     * @brief Hook the tap into an installed gNB (subscribe first).
     * @param tap the tap
     * @param gnbDevice the NrGnbNetDevice (one BWP)
     * @param s1uDevice its S1-U device
     * @param trace the cell's capacity per slot when it replays a trace (nullptr: the channel's)
     */
    static void Install(Ptr<CellGymBsTap> tap,
                        Ptr<NetDevice> gnbDevice,
                        Ptr<NetDevice> s1uDevice,
                        std::shared_ptr<const CapacityTrace> trace = nullptr);

    /**
     * @brief Declare a UE (call after attaching it).
     * @param tap the tap
     * @param ueDevice the NrUeNetDevice
     * @return the UE's index in the tap
     */
    static uint32_t AddUe(Ptr<CellGymBsTap> tap, Ptr<NetDevice> ueDevice);
};

} // namespace ns3

#endif // CELLGYM_BS_TAP_NR_H

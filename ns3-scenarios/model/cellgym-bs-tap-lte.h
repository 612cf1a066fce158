// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_BS_TAP_LTE_H
#define CELLGYM_BS_TAP_LTE_H

#include "cellgym-bs-tap.h"

#include "ns3/lte-helper.h"
#include "ns3/net-device.h"

#include <memory>

namespace ns3
{

class CapacityTrace;

/**
 * @brief The base-station tap on an LTE eNB (the NR installer is CellGymNrBsTap).
 *
 * Transport blocks from `LteEnbPhy`'s `DlPhyTransmission` trace (NDI: new data; both MIMO layers
 * traced, the RBs counted once); RLC reports, heads of line, drains and sojourns from
 * XrcComponentCarrierManager (XrcRlcWatch); a transport block's RBs by inverting 36.213's TBS
 * table (`LteAmc::GetDlTbSizeFromMcs`); tail drops: `LteRlc`'s `TxDrop` without an
 * `LteRlcSduStatusTag`.
 */
class CellGymLteBsTap
{
  public:
    /// @brief Select the RLC-watching component carrier manager. Call before installing eNB
    /// devices.
    static void ConfigureLteHelper(Ptr<LteHelper> lteHelper);

    /**
     * @brief Hook the tap into an installed eNB (subscribe first).
     * @param tap the tap
     * @param enbDevice the eNB's LteEnbNetDevice
     * @param s1uDevice the eNB's S1-U device (uplink GTP-U packets leave through it)
     * @param numRbs downlink bandwidth in RBs
     * @param trace the cell's capacity per TTI when it replays a trace (nullptr: the channel's):
     *        then a TB's RBs are its share of the TTI's trace bytes, and idle RBs carry their
     *        share of them, whatever the MCS (docs/traces.md)
     */
    static void Install(Ptr<CellGymBsTap> tap,
                        Ptr<NetDevice> enbDevice,
                        Ptr<NetDevice> s1uDevice,
                        uint16_t numRbs,
                        std::shared_ptr<const CapacityTrace> trace = nullptr);

    /**
     * @brief Declare a UE (call after attaching it).
     * @param tap the tap
     * @param ueDevice the UE's LteUeNetDevice
     * @return the UE's index in the tap (the order of the calls)
     */
    static uint32_t AddUe(Ptr<CellGymBsTap> tap, Ptr<NetDevice> ueDevice);
};

} // namespace ns3

#endif // CELLGYM_BS_TAP_LTE_H

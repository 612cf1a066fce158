// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_ACK_LOSS_H
#define CELLGYM_ACK_LOSS_H

#include "ns3/error-model.h"
#include "ns3/packet.h"
#include "ns3/random-variable-stream.h"

namespace ns3
{

/**
 * @brief ACK loss on the reverse path between the bottleneck and a server
 * (``ScenarioSpec.ack_loss``, docs/xcp-r.md "ns-3").
 *
 * The receive error model of a server's link: every TCP segment the server receives that is not
 * a SYN (its flow's ACKs; the handshake is kept, as the fast model has none) is lost with
 * probability p, each independently, one uniform draw each from the run's RngRun streams. The
 * ACKs reach it after the bottleneck's router, so the explicit feedback an ACK picked up there
 * is lost with it, as in the fast model (envs/fastsim/ack_loss.py). The router stamps XCP's
 * feedback as the flow's running total (cellgym-explicit-tags.h), which would hand a lost ACK's
 * share to the next one; here each ACK carries its own share, as XCP's per-packet header does:
 * the surviving ACKs' totals are lowered by the shares of the ACKs lost so far, so the sender
 * never sees those. (XCP-r's ACKs carry the window itself, which needs no such change.)
 */
class CellGymAckLossModel : public ErrorModel
{
  public:
    static TypeId GetTypeId();
    CellGymAckLossModel();

    /// Loss probability p in [0, 1) and the random stream of the draws.
    void Setup(double loss, int64_t stream);

    uint64_t GetSeen() const;    //!< ACKs that reached the model
    uint64_t GetDropped() const; //!< ACKs it dropped

    /// Whether a packet (with or without its PPP header) is a TCP segment other than a SYN.
    static bool IsAck(Ptr<const Packet> p);

  private:
    bool DoCorrupt(Ptr<Packet> p) override;
    void DoReset() override;

    double m_loss{0};
    Ptr<UniformRandomVariable> m_draw;
    uint64_t m_seen{0};
    uint64_t m_dropped{0};
    double m_xcpPrev{0}; //!< the XCP total of the latest ACK (lost or not)
    double m_xcpLost{0}; //!< the XCP feedback the lost ACKs carried, bytes
};

} // namespace ns3

#endif // CELLGYM_ACK_LOSS_H

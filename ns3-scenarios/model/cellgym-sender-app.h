// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_SENDER_APP_H
#define CELLGYM_SENDER_APP_H

#include "cellgym-agent-congestion-ops.h"
#include "cellgym-explicit-sender.h"
#include "xrc-feedback-tag.h"

#include "ns3/address.h"
#include "ns3/application.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-state.h"

#include <string>

namespace ns3
{

class TcpSocketBase;

/// @brief What one flow sends and how (one item of `--flows`).
struct CellGymFlowConfig
{
    uint32_t flowId{0};             //!< index in the scenario
    uint32_t ue{0};                 //!< receiving UE's index
    std::string cca{"cubic"};       //!< congestion control name (see CellGymSenderApp::MakeCca)
    std::string traffic{"bulk"};    //!< bulk, video or short
    double startS{0};               //!< start time, s (before the random offset)
    double stopS{-1};               //!< stop time, s (-1: never)
    double delayMs{0};              //!< extra one-way delay of the server link, ms
    uint64_t sizeBytes{0};          //!< transfer size of a short flow, bytes
    double videoRateMbps{17};       //!< sending rate of a video flow while ON, Mbit/s
    double videoOnS{2};             //!< ON time per period, s
    double videoPeriodS{10};        //!< period, s
    uint32_t ssthreshSegments{0};   //!< initial ssthresh, segments (0: ns-3's default)
    double paretoShape{1.2};        //!< pareto: shape of the bounded Pareto sizes
    double paretoMeanPkts{25};      //!< pareto: mean size, packets
    double paretoCutoffPkts{40000}; //!< pareto: largest size, packets
    double paretoIatMs{3.33};       //!< pareto: mean inter-arrival time, ms
};

class CellGymParetoStream;

/// @brief Number of per-flow observation columns (docs/scenario-contract.md).
constexpr uint32_t kFlowFields = 18;

/**
 * @brief A TCP sender for one flow: bulk, video ON/OFF or a finite transfer.
 *
 * It creates its socket itself so that it can choose the congestion control per flow, and keeps
 * the per-step counters of the flow's observation row: RTT samples, window, losses,
 * retransmissions, acknowledged bytes and the XRC feedback carried on ACKs.
 */
class CellGymSenderApp : public Application
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    CellGymSenderApp();
    ~CellGymSenderApp() override;

    /**
     * @brief Configure the flow.
     * @param config the flow
     * @param peer the receiver's address and port
     */
    void Setup(const CellGymFlowConfig& config, const Address& peer);

    /**
     * @brief Make the congestion control a flow's `cca` names.
     * @param cca the name
     * @return the object, or nullptr for an unknown name
     */
    static Ptr<TcpCongestionOps> MakeCca(const std::string& cca);

    /// @return the allowed `cca` names, comma-separated
    static std::string CcaNames();

    /// @return the agent congestion control of an `agent` flow, else nullptr
    Ptr<CellGymAgentCongestionOps> GetAgentOps() const;

    /**
     * @brief An ACK reached the sender carrying the XRC agent's feedback, for the observation
     * (called from the socket's Rx trace, before TCP processes the ACK; the congestion control
     * reads its own feedback: CellGymExplicitSender::ReadFeedback).
     * @param tag the feedback
     */
    void OnFeedback(const XrcFeedbackTag& tag);

    /**
     * @brief The UE's application received data of this flow.
     * @param bytes the bytes received
     */
    void OnReceived(uint32_t bytes);

    /**
     * @brief Write the flow's observation row (columns 0-14, 16, 17) and restart the counters.
     * @param row kFlowFields doubles; column 15 (the eNB's rate) is left to the caller
     */
    void TakeObservation(double* row);

    /**
     * @brief Make this sender a slot of a Pareto flow stream (`traffic: pareto`).
     * @param stream the stream
     * @param slot the slot's index in it
     */
    void SetParetoSlot(CellGymParetoStream* stream, uint32_t slot);

    /// @return true when a pareto slot has started and may take a flow
    bool ParetoReady() const;

    /// @return the flow's index in the scenario
    uint32_t FlowId() const;

    /// @return when the application started (negative: not yet)
    double StartedAtS() const;

    /**
     * @brief A pareto slot takes a flow: a fresh connection sends sizePkts whole segments.
     * @param sizePkts the flow's size, packets
     */
    void BeginParetoFlow(uint64_t sizePkts);

  protected:
    void DoDispose() override;

  private:
    /// @return the congestion control as an explicit-feedback sender, or nullptr (native TCPs)
    CellGymExplicitSender* ExplicitSender() const;
    /// @brief Take @p cca as the congestion control, and its explicit-sender side once (not per
    /// packet).
    void UseCca(Ptr<TcpCongestionOps> cca);

    /// @brief Create the socket, choose its congestion control, connect.
    void StartApplication() override;
    /// @brief Stop sending and close the socket.
    void StopApplication() override;

    /**
     * @brief Hand data to the socket, keeping about two windows queued (send callback).
     * @param socket the socket
     * @param available free space in its send buffer (unused: asked again)
     */
    void Send(Ptr<Socket> socket, uint32_t available);

    /// @brief The agent's command opened the window: refill, then make the socket send now.
    void SendIntoWindow();

    /// @brief Video: add the ON period's bytes of one tick to the budget and send.
    void VideoTick();

    /**
     * @brief The connection is established: start sending.
     * @param socket the socket
     */
    void OnConnected(Ptr<Socket> socket);

    /**
     * @brief A segment reached the socket ("Rx" trace): feedback tag, acknowledged bytes.
     * @param p the segment's payload (tags still attached)
     * @param h its TCP header
     * @param s the socket
     */
    void OnRx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s);

    /**
     * @brief A segment was retransmitted ("Retransmission" trace).
     * @param p the segment
     * @param h its TCP header
     * @param a local address
     * @param b peer address
     * @param s the socket
     */
    void OnRetx(Ptr<const Packet> p,
                const TcpHeader& h,
                const Address& a,
                const Address& b,
                Ptr<const TcpSocketBase> s);

    /**
     * @brief Congestion window trace.
     * @param oldValue previous value, bytes
     * @param newValue new value, bytes
     */
    void OnCwnd(uint32_t oldValue, uint32_t newValue);

    /**
     * @brief A segment leaves (XCP, RCP): write the congestion header on it.
     * @param p the segment
     * @param h its TCP header
     * @param s the socket
     */
    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s);

    /**
     * @brief The smoothed RTT changed (XCP, RCP: the header's RTT).
     * @param oldValue previous
     * @param newValue now
     */
    void OnSrtt(Time oldValue, Time newValue);

    /**
     * @brief Slow-start threshold trace.
     * @param oldValue previous value, bytes
     * @param newValue new value, bytes
     */
    void OnSsThresh(uint32_t oldValue, uint32_t newValue);

    /**
     * @brief Bytes-in-flight trace.
     * @param oldValue previous value, bytes
     * @param newValue new value, bytes
     */
    void OnInFlight(uint32_t oldValue, uint32_t newValue);

    /**
     * @brief Latest RTT sample trace (fires when the value changes).
     * @param oldValue previous sample
     * @param newValue new sample
     */
    void OnLastRtt(Time oldValue, Time newValue);

    /**
     * @brief Congestion state trace: entries into CA_RECOVERY or CA_LOSS are loss events.
     * @param oldValue previous state
     * @param newValue new state
     */
    void OnCongState(TcpSocketState::TcpCongState_t oldValue,
                     TcpSocketState::TcpCongState_t newValue);

    /**
     * @brief Pacing rate trace.
     * @param oldValue previous rate
     * @param newValue new rate
     */
    void OnPacingRate(DataRate oldValue, DataRate newValue);

    /// @return true once a finite flow's last byte has been received
    bool Finished() const;

    /// @brief Create the socket, wire its traces and congestion control, connect.
    void OpenSocket();

    CellGymFlowConfig m_config;  //!< the flow
    Address m_peer;              //!< receiver
    Ptr<Socket> m_socket;        //!< the TCP socket
    Ptr<TcpCongestionOps> m_cca; //!< its congestion control
    /// m_cca as an explicit-feedback sender, or nullptr (UseCca)
    CellGymExplicitSender* m_explicitSender{nullptr};
    /// It paces always, by command or as an explicit sender that paces all its segments: its
    /// pacing rate is observed (set with its socket)
    bool m_reportsPacing{false};
    uint64_t m_budgetBytes{0}; //!< bytes the application may still hand over
    uint64_t m_sndBufBytes{0}; //!< the socket's send buffer size
    bool m_unlimited{false};   //!< bulk: no budget
    bool m_connected{false};   //!< connection established
    bool m_running{false};     //!< between start and stop
    bool m_closed{false};      //!< Close() was called on the socket
    EventId m_videoEvent;      //!< next video tick
    Time m_startedAt;          //!< actual start time

    // Latest values.
    uint32_t m_segBytes{0};     //!< XCP, RCP: segment payload after the header, bytes
    double m_srttS{0};          //!< smoothed RTT for the congestion header, s
    double m_fbRateMbps{0};     //!< latest explicit rate on an ACK
    double m_fbHolMs{0};        //!< latest HoL delay on an ACK
    double m_rttLastMs{0};      //!< latest RTT sample
    double m_rttMinMs{0};       //!< minimum RTT
    double m_cwnd{0};           //!< window, bytes
    double m_ssThresh{0};       //!< slow-start threshold, bytes
    double m_inFlight{0};       //!< bytes in flight
    double m_pacingMbps{0};     //!< pacing rate
    SequenceNumber32 m_lastAck; //!< highest ACK number seen
    bool m_ackSeen{false};      //!< an ACK arrived
    bool m_rttChanged{false};   //!< LastRTT fired since the previous ACK
    uint64_t m_rxTotal{0};      //!< bytes received by the UE in all
    double m_fctS{-1};          //!< completion time of a finite flow (pareto: the latest)

    // A slot of a Pareto flow stream.
    CellGymParetoStream* m_stream{nullptr}; //!< the stream (nullptr: not pareto)
    uint32_t m_slot{0};                     //!< the slot's index in the stream
    bool m_flowActive{false};               //!< a flow is on the slot, not yet received
    bool m_flowUnacked{false};              //!< the flow's sender waits for ACKs
    uint64_t m_flowBytes{0};                //!< its size, bytes
    uint64_t m_flowRx0{0};                  //!< m_rxTotal when it started
    uint64_t m_flowAcked{0};                //!< its bytes acknowledged
    Time m_flowStart;                       //!< its start

    // Counters of the current step.
    double m_rttSumMs{0};     //!< sum of RTT samples
    uint32_t m_rttSamples{0}; //!< RTT samples
    uint64_t m_ackedBytes{0}; //!< newly acknowledged bytes
    uint64_t m_rxBytes{0};    //!< bytes received by the UE
    uint32_t m_lossEvents{0}; //!< entries into recovery or loss
    uint32_t m_retx{0};       //!< retransmitted segments
    uint64_t m_sentBytes{0};  //!< bytes handed to the socket
};

} // namespace ns3

#endif // CELLGYM_SENDER_APP_H

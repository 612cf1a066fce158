// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-sender-app.h"

#include "cellgym-cca-table.h"
#include "cellgym-explicit-sender.h"
#include "cellgym-explicit-tags.h"
#include "cellgym-pareto-stream.h"
#include "cellgym-pbe-monitor.h"
#include "tcp-xrc.h"

#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CellGymSenderApp");
NS_OBJECT_ENSURE_REGISTERED(CellGymSenderApp);

namespace
{

/// How an explicit sender paces (cellgym-explicit-sender.h).
using Pacing = CellGymExplicitSender::Pacing;

constexpr uint32_t kChunkBytes = 64 * 1024;
constexpr double kVideoTickS = 0.01;

} // namespace

TypeId
CellGymSenderApp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CellGymSenderApp")
                            .SetParent<Application>()
                            .SetGroupName("CellGym")
                            .AddConstructor<CellGymSenderApp>();
    return tid;
}

CellGymSenderApp::CellGymSenderApp() = default;
CellGymSenderApp::~CellGymSenderApp() = default;

Ptr<TcpCongestionOps>
CellGymSenderApp::MakeCca(const std::string& cca)
{
    auto it = CcaTypes().find(cca);
    if (it == CcaTypes().end())
    {
        return nullptr;
    }
    ObjectFactory factory(it->second.typeId);
    return factory.Create<TcpCongestionOps>();
}

std::string
CellGymSenderApp::CcaNames()
{
    std::string names;
    for (const auto& [name, type] : CcaTypes())
    {
        names += (names.empty() ? "" : ", ") + name;
    }
    return names;
}

void
CellGymSenderApp::Setup(const CellGymFlowConfig& config, const Address& peer)
{
    m_config = config;
    m_peer = peer;
    UseCca(MakeCca(config.cca));
    NS_ABORT_MSG_IF(!m_cca, "unknown congestion control " << config.cca);
}

Ptr<CellGymAgentCongestionOps>
CellGymSenderApp::GetAgentOps() const
{
    return DynamicCast<CellGymAgentCongestionOps>(m_cca);
}

void
CellGymSenderApp::DoDispose()
{
    m_socket = nullptr;
    UseCca(nullptr);
    Application::DoDispose();
}

void
CellGymSenderApp::StartApplication()
{
    m_running = true;
    m_startedAt = Simulator::Now();
    if (m_stream)
    {
        // A pareto slot opens a connection per flow (BeginParetoFlow): take a waiting one.
        m_stream->OnSlotFree(m_slot);
        return;
    }
    OpenSocket();
    m_unlimited = m_config.traffic == "bulk";
    m_budgetBytes = m_config.traffic == "short" ? m_config.sizeBytes : 0;
    if (m_config.traffic == "video")
    {
        VideoTick();
    }
}

void
CellGymSenderApp::OpenSocket()
{
    m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(m_socket);
    UintegerValue sndBuf;
    tcp->GetAttribute("SndBufSize", sndBuf);
    m_sndBufBytes = sndBuf.Get();
    if (m_config.ssthreshSegments > 0)
    {
        UintegerValue segSize;
        tcp->GetAttribute("SegmentSize", segSize);
        tcp->SetAttribute("InitialSlowStartThreshold",
                          UintegerValue(m_config.ssthreshSegments * segSize.Get()));
    }
    // Traces first: the congestion control's Init may already set the window or pacing rate.
    tcp->TraceConnectWithoutContext("Rx", MakeCallback(&CellGymSenderApp::OnRx, this));
    tcp->TraceConnectWithoutContext("Retransmission",
                                    MakeCallback(&CellGymSenderApp::OnRetx, this));
    tcp->TraceConnectWithoutContext("CongestionWindow",
                                    MakeCallback(&CellGymSenderApp::OnCwnd, this));
    tcp->TraceConnectWithoutContext("SlowStartThreshold",
                                    MakeCallback(&CellGymSenderApp::OnSsThresh, this));
    tcp->TraceConnectWithoutContext("BytesInFlight",
                                    MakeCallback(&CellGymSenderApp::OnInFlight, this));
    tcp->TraceConnectWithoutContext("LastRTT", MakeCallback(&CellGymSenderApp::OnLastRtt, this));
    tcp->TraceConnectWithoutContext("CongState",
                                    MakeCallback(&CellGymSenderApp::OnCongState, this));
    tcp->TraceConnectWithoutContext("PacingRate",
                                    MakeCallback(&CellGymSenderApp::OnPacingRate, this));
    // The controllers that always pace (BBR) and the explicit senders that pace all their
    // segments (PBE-CC) need pacing (agent flows switch it on and off themselves, per command).
    CellGymExplicitSender* explicitSender = ExplicitSender();
    const auto pacing = explicitSender ? explicitSender->GetPacing() : Pacing::NONE;
    const CcaPacing own = PacingOf(m_config.cca);
    m_reportsPacing = own != CcaPacing::OWN || pacing == Pacing::ALL;
    if (own == CcaPacing::ALWAYS || pacing == Pacing::ALL)
    {
        tcp->SetPacingStatus(true);
    }
    // XCP, XCP-r and RCP: the congestion header on every segment, its bytes taken from the
    // payload; RCP paces at its router's rate after the initial window.
    const uint32_t headerBytes = explicitSender ? explicitSender->GetHeaderBytes() : 0;
    if (headerBytes > 0)
    {
        UintegerValue segSize;
        tcp->GetAttribute("SegmentSize", segSize);
        m_segBytes = segSize.Get() - headerBytes;
        tcp->SetAttribute("SegmentSize", UintegerValue(m_segBytes));
        tcp->TraceConnectWithoutContext("Tx", MakeCallback(&CellGymSenderApp::OnTx, this));
        tcp->TraceConnectWithoutContext("RTT", MakeCallback(&CellGymSenderApp::OnSrtt, this));
    }
    if (pacing == Pacing::AFTER_INITIAL_WINDOW)
    {
        tcp->SetPacingStatus(true);
        tcp->SetPaceInitialWindow(false);
    }
    tcp->SetCongestionControlAlgorithm(m_cca);
    if (auto agent = DynamicCast<CellGymAgentCongestionOps>(m_cca))
    {
        agent->SetSendTrigger(MakeCallback(&CellGymSenderApp::SendIntoWindow, this));
    }

    m_socket->Bind();
    m_socket->SetConnectCallback(MakeCallback(&CellGymSenderApp::OnConnected, this),
                                 MakeNullCallback<void, Ptr<Socket>>());
    m_socket->SetSendCallback(MakeCallback(&CellGymSenderApp::Send, this));
    m_socket->Connect(m_peer);
}

void
CellGymSenderApp::SetParetoSlot(CellGymParetoStream* stream, uint32_t slot)
{
    m_stream = stream;
    m_slot = slot;
}

bool
CellGymSenderApp::ParetoReady() const
{
    return m_running;
}

double
CellGymSenderApp::StartedAtS() const
{
    return m_running || m_startedAt.IsStrictlyPositive() ? m_startedAt.GetSeconds() : -1.0;
}

uint32_t
CellGymSenderApp::FlowId() const
{
    return m_config.flowId;
}

void
CellGymSenderApp::BeginParetoFlow(uint64_t sizePkts)
{
    // A fresh connection: new congestion control state, handshake, initial window, no RTT
    // estimate. The previous connection (closed, every byte acknowledged) no longer reports.
    if (m_socket)
    {
        Ptr<TcpSocketBase> old = DynamicCast<TcpSocketBase>(m_socket);
        old->TraceDisconnectWithoutContext("CongestionWindow",
                                           MakeCallback(&CellGymSenderApp::OnCwnd, this));
        old->TraceDisconnectWithoutContext("SlowStartThreshold",
                                           MakeCallback(&CellGymSenderApp::OnSsThresh, this));
        old->TraceDisconnectWithoutContext("BytesInFlight",
                                           MakeCallback(&CellGymSenderApp::OnInFlight, this));
        old->TraceDisconnectWithoutContext("LastRTT",
                                           MakeCallback(&CellGymSenderApp::OnLastRtt, this));
        old->TraceDisconnectWithoutContext("CongState",
                                           MakeCallback(&CellGymSenderApp::OnCongState, this));
        old->TraceDisconnectWithoutContext("PacingRate",
                                           MakeCallback(&CellGymSenderApp::OnPacingRate, this));
        old->TraceDisconnectWithoutContext("Retransmission",
                                           MakeCallback(&CellGymSenderApp::OnRetx, this));
        old->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    }
    UseCca(MakeCca(m_config.cca));
    m_connected = false;
    m_closed = false;
    m_ackSeen = false;
    m_cwnd = 0;
    m_inFlight = 0;
    m_segBytes = 0;
    OpenSocket();
    UintegerValue segSize;
    m_socket->GetAttribute("SegmentSize", segSize);
    m_flowBytes = sizePkts * segSize.Get(); // whole segments (XCP, RCP: after their header)
    m_budgetBytes = m_flowBytes;
    m_unlimited = false;
    m_flowRx0 = m_rxTotal;
    m_flowAcked = 0;
    m_flowActive = true;
    m_flowUnacked = true;
    m_flowStart = Simulator::Now();
}

void
CellGymSenderApp::StopApplication()
{
    m_running = false;
    m_videoEvent.Cancel();
    if (m_socket && !m_closed)
    {
        m_closed = true;
        m_socket->Close();
    }
}

void
CellGymSenderApp::OnConnected(Ptr<Socket> socket)
{
    m_connected = true;
    Send(socket, socket->GetTxAvailable());
}

void
CellGymSenderApp::Send(Ptr<Socket> socket, uint32_t /* available */)
{
    if (!m_connected || !m_running)
    {
        return;
    }
    // Keep at most about two windows (plus a chunk) in the socket, as a real application writing
    // into an auto-tuned buffer would: a flow that stops then leaves within about an RTT instead
    // of draining megabytes of queued data.
    const uint64_t limit = 2 * static_cast<uint64_t>(m_cwnd) + kChunkBytes;
    while (m_unlimited || m_budgetBytes > 0)
    {
        const uint64_t queued = m_sndBufBytes - socket->GetTxAvailable();
        if (queued >= limit)
        {
            break;
        }
        uint64_t want = std::min<uint64_t>({socket->GetTxAvailable(), kChunkBytes, limit - queued});
        if (!m_unlimited)
        {
            want = std::min<uint64_t>(want, m_budgetBytes);
        }
        if (want == 0)
        {
            break;
        }
        const int sent = socket->Send(Create<Packet>(static_cast<uint32_t>(want)));
        if (sent <= 0)
        {
            break;
        }
        m_sentBytes += sent;
        if (!m_unlimited)
        {
            m_budgetBytes -= sent;
        }
    }
    if ((m_config.traffic == "short" || m_stream) && m_budgetBytes == 0 && !m_closed)
    {
        // The whole transfer is queued: TCP sends FIN once it has left.
        m_closed = true;
        socket->Close();
    }
}

void
CellGymSenderApp::SendIntoWindow()
{
    if (!m_socket || !m_connected || !m_running || m_closed)
    {
        return;
    }
    // The allowance of Send follows the window: top the socket up first. Then an empty write: it
    // adds no byte, and TcpSocketBase schedules SendPendingData when the window has room, as it
    // does for any write (the twin's sender sends into an opened window in the same TTI).
    Send(m_socket, m_socket->GetTxAvailable());
    m_socket->Send(Create<Packet>(0));
}

void
CellGymSenderApp::VideoTick()
{
    // ON for videoOnS of every videoPeriodS at videoRateMbps; unsent bytes of a chunk carry over
    // into the OFF period, as a DASH client would finish fetching the chunk.
    const double sinceStart = (Simulator::Now() - m_startedAt).GetSeconds();
    const double phase = std::fmod(sinceStart, m_config.videoPeriodS);
    if (phase < m_config.videoOnS)
    {
        m_budgetBytes += static_cast<uint64_t>(m_config.videoRateMbps * 1e6 / 8 * kVideoTickS);
        if (m_socket)
        {
            Send(m_socket, m_socket->GetTxAvailable());
        }
    }
    m_videoEvent = Simulator::Schedule(Seconds(kVideoTickS), &CellGymSenderApp::VideoTick, this);
}

void
CellGymSenderApp::OnRx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
{
    if (m_stream && s != DynamicCast<TcpSocketBase>(m_socket))
    {
        return; // a pareto slot's previous connection
    }
    // The socket's Rx trace fires before TCP processes the segment, so a TcpXrc sender sees the
    // feedback of this ACK when it reacts to it.
    XrcFeedbackTag tag;
    if (p->PeekPacketTag(tag))
    {
        OnFeedback(tag);
    }
    if (CellGymExplicitSender* explicitSender = ExplicitSender())
    {
        explicitSender->ReadFeedback(p); // XRC's, XCP's, XCP-r's, RCP's or PBE-CC's feedback
    }
    if (!(h.GetFlags() & TcpHeader::ACK))
    {
        return;
    }
    // Sequence-number arithmetic: a long bulk flow wraps the 32-bit space.
    const SequenceNumber32 ack = h.GetAckNumber();
    if (m_ackSeen && ack > m_lastAck)
    {
        m_ackedBytes += static_cast<uint32_t>(ack - m_lastAck);
        // Every advancing ACK is an RTT sample; LastRTT only fires when the value changes.
        if (!m_rttChanged && m_rttLastMs > 0)
        {
            m_rttSumMs += m_rttLastMs;
            m_rttSamples += 1;
        }
    }
    if (m_stream && m_ackSeen && ack > m_lastAck && m_flowUnacked)
    {
        m_flowAcked += static_cast<uint32_t>(ack - m_lastAck);
        if (m_flowAcked >= m_flowBytes)
        {
            m_flowUnacked = false;
            m_stream->OnSlotFree(m_slot);
        }
    }
    if (!m_ackSeen || ack > m_lastAck)
    {
        m_lastAck = ack;
    }
    m_ackSeen = true;
    m_rttChanged = false;
}

void
CellGymSenderApp::OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
{
    // The congestion header XCP's and RCP's routers read: the window and the smoothed RTT.
    ExplicitHeaderTag tag;
    tag.cwndBytes = m_cwnd;
    tag.rttS = m_srttS;
    tag.segBytes = m_segBytes;
    p->AddPacketTag(tag);
    if (CellGymExplicitSender* explicitSender = ExplicitSender())
    {
        explicitSender->TagSegment(p); // XCP-r: its congestion flag
    }
}

void
CellGymSenderApp::OnSrtt(Time, Time newValue)
{
    m_srttS = newValue.GetSeconds();
}

void
CellGymSenderApp::OnRetx(
    Ptr<const Packet>, const TcpHeader&, const Address&, const Address&, Ptr<const TcpSocketBase>)
{
    m_retx += 1;
}

void
CellGymSenderApp::OnCwnd(uint32_t, uint32_t newValue)
{
    m_cwnd = newValue;
}

void
CellGymSenderApp::OnSsThresh(uint32_t, uint32_t newValue)
{
    m_ssThresh = newValue;
}

void
CellGymSenderApp::OnInFlight(uint32_t, uint32_t newValue)
{
    m_inFlight = newValue;
}

void
CellGymSenderApp::OnLastRtt(Time, Time newValue)
{
    const double ms = newValue.GetSeconds() * 1e3;
    if (ms <= 0)
    {
        return;
    }
    m_rttLastMs = ms;
    m_rttMinMs = m_rttMinMs > 0 ? std::min(m_rttMinMs, ms) : ms;
    m_rttSumMs += ms;
    m_rttSamples += 1;
    m_rttChanged = true;
}

void
CellGymSenderApp::OnCongState(TcpSocketState::TcpCongState_t oldValue,
                              TcpSocketState::TcpCongState_t newValue)
{
    const bool lossState
        = newValue == TcpSocketState::CA_RECOVERY || newValue == TcpSocketState::CA_LOSS;
    if (lossState && newValue != oldValue)
    {
        m_lossEvents += 1;
    }
}

void
CellGymSenderApp::OnPacingRate(DataRate, DataRate newValue)
{
    m_pacingMbps = newValue.GetBitRate() / 1e6;
}

void
CellGymSenderApp::OnFeedback(const XrcFeedbackTag& tag)
{
    m_fbRateMbps = tag.rateMbps;
    m_fbHolMs = tag.holMs;
}

void
CellGymSenderApp::UseCca(Ptr<TcpCongestionOps> cca)
{
    m_cca = cca;
    m_explicitSender = dynamic_cast<CellGymExplicitSender*>(PeekPointer(cca));
}

CellGymExplicitSender*
CellGymSenderApp::ExplicitSender() const
{
    return m_explicitSender;
}

void
CellGymSenderApp::OnReceived(uint32_t bytes)
{
    m_rxBytes += bytes;
    m_rxTotal += bytes;
    if (m_config.traffic == "short" && m_fctS < 0 && m_rxTotal >= m_config.sizeBytes)
    {
        m_fctS = (Simulator::Now() - m_startedAt).GetSeconds();
    }
    if (m_stream && m_flowActive && m_rxTotal - m_flowRx0 >= m_flowBytes)
    {
        m_flowActive = false;
        m_fctS = m_stream->OnFlowDone(m_slot);
    }
}

bool
CellGymSenderApp::Finished() const
{
    return m_config.traffic == "short" && m_fctS >= 0;
}

void
CellGymSenderApp::TakeObservation(double* row)
{
    const bool pacing = m_pacingMbps > 0 && m_reportsPacing;
    row[0] = m_fbRateMbps;
    row[1] = m_fbHolMs;
    row[2] = m_rttLastMs;
    row[3] = m_rttMinMs;
    row[4] = m_rttSamples > 0 ? m_rttSumMs / m_rttSamples : m_rttLastMs;
    row[5] = m_rttSamples;
    row[6] = m_cwnd;
    row[7] = std::min(m_ssThresh, 1e9);
    row[8] = m_inFlight;
    row[9] = static_cast<double>(m_ackedBytes);
    row[10] = static_cast<double>(m_rxBytes);
    row[11] = m_lossEvents;
    row[12] = m_retx;
    row[13] = pacing ? m_pacingMbps : 0.0;
    row[14] = m_stream ? (m_flowActive || m_flowUnacked ? 1.0 : 0.0)
                       : ((m_running && !Finished()) ? 1.0 : 0.0);
    row[16] = static_cast<double>(m_sentBytes);
    row[17] = m_fctS;
    m_rttSumMs = 0;
    m_rttSamples = 0;
    m_ackedBytes = 0;
    m_rxBytes = 0;
    m_lossEvents = 0;
    m_retx = 0;
    m_sentBytes = 0;
}

} // namespace ns3

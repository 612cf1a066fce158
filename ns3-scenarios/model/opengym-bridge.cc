// SPDX-License-Identifier: GPL-2.0-only
// Client side of the ns3-gym wire protocol, written from the protocol description
// (docs/scenario-contract.md, ../shared/ns3-notes.md): ZeroMQ REQ, one serialized ns3opengym
// message per frame. The REQ socket is CellGym's own ZMTP peer (zmtp-req.h), without libzmq's
// I/O thread.
#include "opengym-bridge.h"

#include "ns3opengym.pb.h"
#include "zmtp-req.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <sys/prctl.h>
#include <unistd.h>

namespace ns3
{
namespace cellgym
{

namespace
{

[[noreturn]] void
Fail(const std::string& what, int code)
{
    std::cerr << "cellgym bridge: " << what << std::endl;
    std::exit(code);
}

void
FillBoxSpace(const NamedBox& box, ns3opengym::SpaceDescription* desc)
{
    ns3opengym::BoxSpace space;
    space.set_low(static_cast<float>(box.low));
    space.set_high(static_cast<float>(box.high));
    space.set_dtype(ns3opengym::DOUBLE);
    for (uint32_t d : box.shape)
    {
        space.add_shape(d);
    }
    desc->set_type(ns3opengym::Box);
    desc->set_name(box.name);
    desc->mutable_space()->PackFrom(space);
}

/// Fill `container` with `box`, using `scratch` (cleared first) for the packed Box data: the
/// messages are reused from step to step, so a step allocates nothing once they have grown.
void
FillBoxData(const NamedBox& box,
            ns3opengym::DataContainer* container,
            ns3opengym::BoxDataContainer& scratch)
{
    scratch.Clear();
    scratch.set_dtype(ns3opengym::DOUBLE);
    for (uint32_t d : box.shape)
    {
        scratch.add_shape(d);
    }
    scratch.mutable_doubledata()->Assign(box.data.begin(), box.data.end());
    container->set_type(ns3opengym::Box);
    container->set_name(box.name);
    container->mutable_data()->PackFrom(scratch);
}

} // namespace

/// The REQ connection and the messages reused at every step.
struct OpenGymBridge::Impl
{
    std::unique_ptr<ZmtpReq> req; //!< REQ peer connected to Python
    uint16_t port{0};             //!< Python's port
    int timeoutMs{0};             //!< receive timeout
    // Messages reused at every step (Clear() keeps their memory).
    ns3opengym::EnvStateMsg state;     //!< the step's observation message
    ns3opengym::DictDataContainer obs; //!< its Dict of Boxes
    ns3opengym::BoxDataContainer box;  //!< scratch for one Box
    ns3opengym::EnvActMsg act;         //!< the reply
    std::string out;                   //!< serialized request
    std::string in;                    //!< serialized reply

    /// Send one message and receive the reply into `reply`; exits on timeout or error.
    void Exchange(const google::protobuf::Message& request, google::protobuf::Message& reply)
    {
        out.clear();
        if (!request.SerializeToString(&out))
        {
            Fail("cannot serialize " + request.GetTypeName(), 4);
        }
        try
        {
            req->Send(out);
            req->Recv(in);
        }
        catch (const ZmtpReq::Timeout&)
        {
            Fail("no reply from the Python side on 127.0.0.1:" + std::to_string(port) + " within "
                     + std::to_string(timeoutMs) + " ms; exiting",
                 3);
        }
        catch (const std::exception& e)
        {
            Fail(std::string("the connection to the Python side failed: ") + e.what(), 4);
        }
        if (!reply.ParseFromString(in))
        {
            Fail("cannot parse the reply as " + reply.GetTypeName(), 4);
        }
    }
};

OpenGymBridge::OpenGymBridge(uint16_t port, int recvTimeoutMs)
    : m_impl(std::make_unique<Impl>())
{
    // Die with the Python parent, whatever kills it: no orphaned simulators.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
    {
        Fail("the parent process is already gone", 3);
    }
    m_impl->port = port;
    m_impl->timeoutMs = recvTimeoutMs;
    try
    {
        m_impl->req = std::make_unique<ZmtpReq>(port, recvTimeoutMs);
    }
    catch (const ZmtpReq::Timeout&)
    {
        Fail("no ZMTP greeting from 127.0.0.1:" + std::to_string(port) + " within "
                 + std::to_string(recvTimeoutMs) + " ms; exiting",
             3);
    }
    catch (const std::exception& e)
    {
        Fail(std::string("cannot open the ZeroMQ connection to the Python side: ") + e.what(), 4);
    }
}

OpenGymBridge::~OpenGymBridge() = default;

bool
OpenGymBridge::Init(const std::vector<NamedBox>& obsSpace, const NamedBox& actSpace)
{
    ns3opengym::SimInitMsg init;
    init.set_simprocessid(static_cast<uint64_t>(getpid()));
    // No waf shell: 0. ns3-gym's client would SIGTERM a non-zero wafShellProcessId on close
    // (ns3env.py, Ns3ZmqBridge.close), and our parent may be the very Python process it runs in.
    init.set_wafshellprocessid(0);
    ns3opengym::DictSpace dict;
    for (const auto& box : obsSpace)
    {
        FillBoxSpace(box, dict.add_element());
    }
    init.mutable_obsspace()->set_type(ns3opengym::Dict);
    init.mutable_obsspace()->mutable_space()->PackFrom(dict);
    FillBoxSpace(actSpace, init.mutable_actspace());
    ns3opengym::SimInitAck ack;
    m_impl->Exchange(init, ack);
    if (!ack.done())
    {
        // ns3-gym's client and CellGym's both answer SimInitAck{done=true}; anything else (an
        // empty message, another message type) is a client that does not speak the protocol.
        Fail("the reply to SimInitMsg is not a SimInitAck with done=true", 4);
    }
    return !ack.stopsimreq();
}

GymAction
OpenGymBridge::Step(const std::vector<NamedBox>& obs, bool gameOver, const std::string& info)
{
    auto& state = m_impl->state;
    auto& dict = m_impl->obs;
    state.Clear();
    dict.Clear();
    for (const auto& box : obs)
    {
        FillBoxData(box, dict.add_element(), m_impl->box);
    }
    state.mutable_obsdata()->set_type(ns3opengym::Dict);
    state.mutable_obsdata()->mutable_data()->PackFrom(dict);
    state.set_reward(0.0F);
    state.set_isgameover(gameOver);
    state.set_reason(ns3opengym::EnvStateMsg::SimulationEnd);
    state.set_info(info);

    auto& act = m_impl->act;
    act.Clear();
    m_impl->Exchange(state, act);

    GymAction action;
    action.stop = act.stopsimreq();
    if (!act.has_actdata())
    {
        return action;
    }
    const auto& container = act.actdata();
    if (container.type() == ns3opengym::Discrete)
    {
        ns3opengym::DiscreteDataContainer d;
        if (container.data().UnpackTo(&d))
        {
            action.shape = {1};
            action.data = {static_cast<double>(d.data())};
        }
        return action;
    }
    ns3opengym::BoxDataContainer box;
    if (!container.data().UnpackTo(&box))
    {
        if (container.type() == ns3opengym::NoSpaceType)
        {
            return action;
        }
        Fail("the action is not a Box or Discrete container", 4);
    }
    action.shape.assign(box.shape().begin(), box.shape().end());
    switch (box.dtype())
    {
        case ns3opengym::FLOAT:
            action.data.assign(box.floatdata().begin(), box.floatdata().end());
            break;
        case ns3opengym::INT:
            action.data.assign(box.intdata().begin(), box.intdata().end());
            break;
        case ns3opengym::UINT:
            action.data.assign(box.uintdata().begin(), box.uintdata().end());
            break;
        default:
            action.data.assign(box.doubledata().begin(), box.doubledata().end());
            break;
    }
    return action;
}

} // namespace cellgym
} // namespace ns3

// SPDX-License-Identifier: GPL-2.0-only
// A ZeroMQ REQ peer written from the ZMTP 3.0 specification (rfc.zeromq.org/spec/23, NULL
// mechanism, rfc.zeromq.org/spec/24): greeting, READY command, frames.
#include "zmtp-req.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ns3
{
namespace cellgym
{

namespace
{

constexpr uint8_t kMore = 0x01;    //!< frame flag: more frames follow in this message
constexpr uint8_t kLong = 0x02;    //!< frame flag: 8-byte size
constexpr uint8_t kCommand = 0x04; //!< frame flag: a command, not a message frame
constexpr size_t kGreeting = 64;   //!< greeting length

std::string
SysError(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

/// Append a frame header (flags and size) for a payload of `size` bytes.
void
AppendHeader(std::string& out, uint8_t flags, uint64_t size)
{
    if (size <= 255)
    {
        out.push_back(static_cast<char>(flags));
        out.push_back(static_cast<char>(size));
        return;
    }
    out.push_back(static_cast<char>(flags | kLong));
    for (int shift = 56; shift >= 0; shift -= 8)
    {
        out.push_back(static_cast<char>((size >> shift) & 0xFF));
    }
}

} // namespace

ZmtpReq::ZmtpReq(uint16_t port, int recvTimeoutMs)
    : m_timeoutMs(recvTimeoutMs)
    , m_in(1 << 16)
{
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
    {
        throw std::runtime_error(SysError("socket"));
    }
    const int one = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    {
        throw std::runtime_error(SysError("connect to 127.0.0.1:" + std::to_string(port)));
    }

    // Greeting: signature, version 3.0, mechanism NULL, as-server 0, filler.
    std::string greeting(kGreeting, '\0');
    greeting[0] = static_cast<char>(0xFF);
    greeting[9] = 0x7F;
    greeting[10] = 3;
    greeting[11] = 0;
    std::memcpy(&greeting[12], "NULL", 4);
    WriteAll(greeting.data(), greeting.size());
    char peer[kGreeting];
    ReadAll(peer, kGreeting);
    if (static_cast<uint8_t>(peer[0]) != 0xFF || peer[9] != 0x7F || peer[10] < 3)
    {
        throw std::runtime_error("the peer is not a ZMTP 3 endpoint (bad greeting)");
    }
    if (std::memcmp(&peer[12], "NULL", 4) != 0 || peer[16] != '\0')
    {
        throw std::runtime_error("the peer asks for a security mechanism other than NULL");
    }

    // READY with our socket type; the peer's READY (or ERROR) follows.
    std::string body;
    body.push_back(5);
    body += "READY";
    body.push_back(11);
    body += "Socket-Type";
    const std::string type = "REQ";
    for (int shift = 24; shift >= 0; shift -= 8)
    {
        body.push_back(static_cast<char>((type.size() >> shift) & 0xFF));
    }
    body += type;
    std::string ready;
    AppendHeader(ready, kCommand, body.size());
    ready += body;
    WriteAll(ready.data(), ready.size());
    std::string reply;
    const uint8_t flags = ReadFrame(reply);
    if (!(flags & kCommand) || reply.size() < 6 || reply.compare(1, 5, "READY") != 0)
    {
        const bool error = reply.size() >= 6 && reply.compare(1, 5, "ERROR") == 0;
        throw std::runtime_error(error ? "the peer refused the connection: " + reply.substr(7)
                                       : "the peer did not answer READY");
    }
}

ZmtpReq::~ZmtpReq()
{
    if (m_fd >= 0)
    {
        ::close(m_fd);
    }
}

void
ZmtpReq::Send(const std::string& body)
{
    m_out.clear();
    AppendHeader(m_out, kMore, 0); // REQ's empty delimiter
    AppendHeader(m_out, 0, body.size());
    m_out += body;
    WriteAll(m_out.data(), m_out.size());
}

void
ZmtpReq::Recv(std::string& body)
{
    body.clear();
    // Skip commands (a peer with heartbeats on sends PING; none is needed to answer here), then
    // expect the empty delimiter and the body frame(s).
    bool delimiter = false;
    while (true)
    {
        std::string frame;
        const uint8_t flags = ReadFrame(frame);
        if (flags & kCommand)
        {
            continue;
        }
        if (!delimiter)
        {
            if (!frame.empty() || !(flags & kMore))
            {
                throw std::runtime_error("the reply does not start with REQ's empty delimiter");
            }
            delimiter = true;
            continue;
        }
        body += frame;
        if (!(flags & kMore))
        {
            return;
        }
    }
}

void
ZmtpReq::WriteAll(const char* data, size_t size)
{
    while (size > 0)
    {
        const ssize_t n = ::send(m_fd, data, size, MSG_NOSIGNAL);
        if (n < 0)
        {
            if (errno == EINTR)
            {
                continue;
            }
            throw std::runtime_error(SysError("send"));
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
}

void
ZmtpReq::ReadAll(char* out, size_t size)
{
    while (size > 0)
    {
        if (m_pos == m_end)
        {
            pollfd p{m_fd, POLLIN, 0};
            const int ready = ::poll(&p, 1, m_timeoutMs > 0 ? m_timeoutMs : -1);
            if (ready == 0)
            {
                throw Timeout("no data within " + std::to_string(m_timeoutMs) + " ms");
            }
            if (ready < 0)
            {
                if (errno == EINTR)
                {
                    continue;
                }
                throw std::runtime_error(SysError("poll"));
            }
            const ssize_t n = ::recv(m_fd, m_in.data(), m_in.size(), 0);
            if (n == 0)
            {
                throw std::runtime_error("the peer closed the connection");
            }
            if (n < 0)
            {
                if (errno == EINTR || errno == EAGAIN)
                {
                    continue;
                }
                throw std::runtime_error(SysError("recv"));
            }
            m_pos = 0;
            m_end = static_cast<size_t>(n);
        }
        const size_t take = std::min(size, m_end - m_pos);
        if (out != nullptr)
        {
            std::memcpy(out, m_in.data() + m_pos, take);
            out += take;
        }
        m_pos += take;
        size -= take;
    }
}

uint8_t
ZmtpReq::ReadFrame(std::string& payload)
{
    char head[2];
    ReadAll(head, 2);
    const auto flags = static_cast<uint8_t>(head[0]);
    uint64_t size = static_cast<uint8_t>(head[1]);
    if (flags & kLong)
    {
        unsigned char rest[7];
        ReadAll(reinterpret_cast<char*>(rest), 7);
        for (unsigned char b : rest)
        {
            size = (size << 8) | b;
        }
    }
    if (size > (1ULL << 30))
    {
        throw std::runtime_error("a frame of " + std::to_string(size) + " bytes: over 1 GiB");
    }
    const size_t start = payload.size();
    payload.resize(start + size);
    ReadAll(payload.data() + start, size);
    return flags;
}

} // namespace cellgym
} // namespace ns3

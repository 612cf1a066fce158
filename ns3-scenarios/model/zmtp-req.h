// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_ZMTP_REQ_H
#define CELLGYM_ZMTP_REQ_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3
{
namespace cellgym
{

/**
 * @brief A ZeroMQ REQ peer over one TCP connection, speaking ZMTP 3.0 (rfc.zeromq.org/spec/23)
 * with the NULL mechanism, on the calling thread.
 *
 * libzmq moves every message through a background I/O thread on each side; in the simulator's
 * lock step with Python that thread's wake-ups cost about 0.2 ms of CPU per step (measured with
 * perf: bench/README.md). This peer reads and writes the socket directly with blocking calls,
 * so a step costs two system calls each way. On the wire it is an ordinary REQ socket: any ZeroMQ
 * REP or ROUTER peer (CellGym's Python side, ns3-gym's client) serves it unchanged.
 *
 * Errors are reported as exceptions (std::runtime_error); a receive that waits longer than the
 * timeout throws ZmtpReq::Timeout.
 */
class ZmtpReq
{
  public:
    /// Thrown when no reply arrives within the receive timeout.
    struct Timeout : std::runtime_error
    {
        using std::runtime_error::runtime_error;
    };

    /**
     * @brief Connect to 127.0.0.1:port and complete the ZMTP handshake.
     * @param port the REP peer's TCP port on 127.0.0.1
     * @param recvTimeoutMs longest wait for any read (<= 0: forever)
     */
    ZmtpReq(uint16_t port, int recvTimeoutMs);
    ~ZmtpReq();
    ZmtpReq(const ZmtpReq&) = delete;
    ZmtpReq& operator=(const ZmtpReq&) = delete;

    /// Send one request (one message of one frame, after REQ's empty delimiter frame).
    void Send(const std::string& body);

    /// Receive the reply's body (REQ's empty delimiter frame removed) into `body`.
    void Recv(std::string& body);

  private:
    void WriteAll(const char* data, size_t size);
    /// Copy the next `size` bytes of the stream to `out` (nullptr: skip them).
    void ReadAll(char* out, size_t size);
    /// Read one frame: returns its flags; the payload is appended to `payload`.
    uint8_t ReadFrame(std::string& payload);

    int m_fd{-1};           //!< the TCP socket
    int m_timeoutMs{0};     //!< receive timeout
    std::vector<char> m_in; //!< bytes read from the socket, not yet consumed
    size_t m_pos{0};        //!< first unconsumed byte of m_in
    size_t m_end{0};        //!< end of the valid bytes of m_in
    std::string m_out;      //!< scratch for an outgoing message
};

} // namespace cellgym
} // namespace ns3

#endif // CELLGYM_ZMTP_REQ_H

// SPDX-License-Identifier: GPL-2.0-only
// The run's draws (cellgym/draws.py): read, checked against the run's arguments.
#include "cellgym-draws.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace ns3
{

namespace
{
const char* kMagic = "# cellgym-draws v1";
/// Flows start up to this many ms after their start (cellgym.draws.START_OFFSET_MS).
constexpr uint32_t kStartOffsetMs = 100;

[[noreturn]] void
Fail(const std::string& path, const std::string& why)
{
    std::cerr << "cellgym-lte: --draws='" << path << "' " << why
              << " (write it with cellgym.draws.write_draws_file for this scenario and --simSeed)"
              << std::endl;
    std::exit(2);
}

/// Words of the file after its header lines, with a cursor.
class Reader
{
  public:
    Reader(const std::string& path, std::istream& in)
        : m_path(path)
    {
        std::string line;
        std::ostringstream body;
        while (std::getline(in, line))
        {
            if (!line.empty() && line[0] == '#')
            {
                continue;
            }
            body << line << '\n';
        }
        m_in.str(body.str());
    }

    void Expect(const std::string& word)
    {
        std::string got;
        if (!(m_in >> got) || got != word)
        {
            Fail(m_path, "expected '" + word + "', found '" + got + "'");
        }
    }

    uint64_t Count(const std::string& what, uint64_t high)
    {
        std::string w;
        m_in >> w;
        char* end = nullptr;
        const unsigned long long v = std::strtoull(w.c_str(), &end, 10);
        if (w.empty() || w[0] == '-' || *end != '\0' || v > high)
        {
            Fail(m_path, what + " '" + w + "' is not a count in [0, " + std::to_string(high) + "]");
        }
        return v;
    }

    double Number(const std::string& what, double low, double high)
    {
        std::string w;
        m_in >> w;
        char* end = nullptr;
        const double v = std::strtod(w.c_str(), &end);
        if (w.empty() || *end != '\0' || !(v >= low && v <= high))
        {
            std::ostringstream allowed;
            allowed << what << " '" << w << "' is not a number in [" << low << ", " << high << "]";
            Fail(m_path, allowed.str());
        }
        return v;
    }

  private:
    std::string m_path;
    std::istringstream m_in;
};

void
CheckCount(const std::string& path, const std::string& what, uint64_t got, uint64_t want)
{
    if (got != want)
    {
        Fail(path,
             "has " + std::to_string(got) + " " + what + ": this run has " + std::to_string(want));
    }
}

/// The first two lines: the magic line and the RngRun the draws were made for.
void
ReadHeader(const std::string& path, std::istream& in, const CellGymDraws::Expect& e)
{
    std::string line;
    std::getline(in, line);
    if (line != kMagic)
    {
        Fail(path, "is not a draws file: its first line must be '" + std::string(kMagic) + "'");
    }
    std::getline(in, line);
    const std::string key = "# rng_run: ";
    if (line.rfind(key, 0) != 0)
    {
        Fail(path, "has no '# rng_run:' line after the first");
    }
    if (line.substr(key.size()) != std::to_string(e.rngRun))
    {
        Fail(path,
             "was drawn for RngRun " + line.substr(key.size()) + ": this run's --simSeed is "
                 + std::to_string(e.rngRun));
    }
}

/// The "flows" section: each flow's start offset, whole ms (0 for a pareto slot).
std::vector<uint32_t>
ReadOffsets(Reader& r, const std::string& path, const CellGymDraws::Expect& e)
{
    std::vector<uint32_t> offsetMs;
    r.Expect("flows");
    CheckCount(path, "flows", r.Count("flows", 1 << 20), e.numFlows);
    for (uint32_t f = 0; f < e.numFlows; ++f)
    {
        const double v
            = r.Number("flow " + std::to_string(f) + "'s start offset", 0, kStartOffsetMs - 1);
        if (v != std::floor(v) || (e.paretoFlows.size() > f && e.paretoFlows[f] && v != 0))
        {
            Fail(path,
                 "flow " + std::to_string(f)
                     + "'s start offset is not a whole number of ms (0 for a pareto slot)");
        }
        offsetMs.push_back(static_cast<uint32_t>(v));
    }
    return offsetMs;
}

/// The "moves" section: each UE's distances at the random moves.
std::vector<std::vector<double>>
ReadMoves(Reader& r, const std::string& path, const CellGymDraws::Expect& e)
{
    r.Expect("moves");
    const uint64_t k = r.Count("moves", 1ULL << 32);
    const uint64_t nu = r.Count("UEs", 1 << 20);
    const double period = r.Number("mobility period", 0, 1e12);
    CheckCount(path, "random moves", k, e.moves);
    if (k > 0)
    {
        CheckCount(path, "UEs", nu, e.numUes);
        if (std::abs(period - e.periodS) > 1e-9 * std::max(1.0, e.periodS))
        {
            Fail(path,
                 "has moves every " + std::to_string(period) + " s: --mobilityPeriodS is "
                     + std::to_string(e.periodS));
        }
    }
    std::vector<std::vector<double>> moves(e.numUes);
    for (uint64_t u = 0; k > 0 && u < nu; ++u)
    {
        r.Expect("ue");
        CheckCount(path, "as the next UE's index", r.Count("UE", 1 << 20), u);
        for (uint64_t i = 0; i < k; ++i)
        {
            moves[u].push_back(
                r.Number("UE " + std::to_string(u) + "'s distance", e.minDistance, e.maxDistance));
        }
    }
    return moves;
}

/// The "streams" section: each Pareto stream's arrivals and flow sizes.
std::vector<CellGymDraws::Stream>
ReadStreams(Reader& r, const std::string& path, const CellGymDraws::Expect& e)
{
    std::vector<CellGymDraws::Stream> streams;
    r.Expect("streams");
    CheckCount(path, "Pareto streams", r.Count("streams", 1 << 20), e.streams);
    for (uint32_t s = 0; s < e.streams; ++s)
    {
        r.Expect("stream");
        CheckCount(path, "as the next stream's index", r.Count("stream", 1 << 20), s);
        const uint64_t n = r.Count("arrivals", 1ULL << 32);
        CellGymDraws::Stream st;
        double last = 0;
        for (uint64_t i = 0; i < n; ++i)
        {
            const double at = r.Number("stream " + std::to_string(s) + "'s arrival", last, 1e12);
            last = at;
            st.afterMs.push_back(at);
            st.sizePkts.push_back(r.Count("a flow size", 1ULL << 40));
            if (st.sizePkts.back() == 0)
            {
                Fail(path, "has a flow of 0 packets in stream " + std::to_string(s));
            }
        }
        streams.push_back(std::move(st));
    }
    return streams;
}

/// The "udp" section: each exponential UDP source's on/off periods.
std::vector<std::vector<double>>
ReadUdpPeriods(Reader& r, const std::string& path, const CellGymDraws::Expect& e)
{
    std::vector<std::vector<double>> udp;
    r.Expect("udp");
    const uint64_t sources = r.Count("UDP sources", 1 << 20);
    CheckCount(path, "UDP sources with exponential periods", sources, e.udpExpSources);
    for (uint64_t s = 0; s < sources; ++s)
    {
        r.Expect("source");
        CheckCount(path, "as the next source's index", r.Count("source", 1 << 20), s);
        const uint64_t n = r.Count("periods", 1ULL << 32);
        std::vector<double> p;
        for (uint64_t i = 0; i < n; ++i)
        {
            p.push_back(r.Number("a UDP period", 1e-7, 1e12));
        }
        udp.push_back(std::move(p));
    }
    return udp;
}
} // namespace

CellGymDraws
CellGymDraws::None()
{
    return CellGymDraws();
}

void
CellGymDraws::Needed(const Expect& e) const
{
    if (m_present)
    {
        return;
    }
    std::string what;
    if (e.moves > 0)
    {
        what = "--mobility=random";
    }
    else if (e.streams > 0)
    {
        what = "pareto flows";
    }
    else if (e.udpExpSources > 0)
    {
        what = "--udpPeriods=exponential";
    }
    if (!what.empty())
    {
        std::cerr << "cellgym-lte: " << what
                  << " needs --draws=<file>: the run's random draws, written by "
                     "cellgym.draws.write_draws_file (the environments pass it)"
                  << std::endl;
        std::exit(2);
    }
}

CellGymDraws
CellGymDraws::Load(const std::string& path, const Expect& e)
{
    std::ifstream in(path);
    if (!in)
    {
        Fail(path, "cannot be opened");
    }
    ReadHeader(path, in, e);
    Reader r(path, in);
    CellGymDraws d;
    d.m_present = true;
    d.m_offsetMs = ReadOffsets(r, path, e);
    d.m_moves = ReadMoves(r, path, e);
    d.m_streams = ReadStreams(r, path, e);
    d.m_udp = ReadUdpPeriods(r, path, e);
    r.Expect("end");
    return d;
}

double
CellGymDraws::StartOffsetS(uint32_t flow) const
{
    return flow < m_offsetMs.size() ? m_offsetMs[flow] / 1e3 : 0.0;
}

const std::vector<double>&
CellGymDraws::Moves(uint32_t ue) const
{
    return m_moves.at(ue);
}

const CellGymDraws::Stream&
CellGymDraws::ParetoStream(uint32_t k) const
{
    return m_streams.at(k);
}

const std::vector<double>&
CellGymDraws::UdpPeriods(uint32_t k) const
{
    return m_udp.at(k);
}

} // namespace ns3

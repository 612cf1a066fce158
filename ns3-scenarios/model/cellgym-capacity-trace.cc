// SPDX-License-Identifier: GPL-2.0-only
// The capacity file of a trace-driven cell (docs/traces.md): header validated, values checked.
#include "cellgym-capacity-trace.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

namespace ns3
{

namespace
{
const char* kMagic = "# cellgym-capacity v1";

[[noreturn]] void
Fail(const std::string& path, const std::string& why)
{
    std::cerr << "cellgym-lte: --capacityTrace='" << path << "' " << why << std::endl;
    std::exit(2);
}

std::string
Trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
} // namespace

CapacityTrace
CapacityTrace::Load(const std::string& path, uint32_t intervalUs)
{
    std::ifstream in(path);
    if (!in)
    {
        Fail(path, "cannot be opened: give a file written by cellgym.traces.write_capacity_file");
    }
    std::string line;
    std::getline(in, line);
    if (Trim(line) != kMagic)
    {
        Fail(path, "is not a capacity file: its first line must be '" + std::string(kMagic) + "'");
    }
    std::map<std::string, std::string> meta;
    CapacityTrace trace;
    uint64_t lineNo = 1;
    while (std::getline(in, line))
    {
        ++lineNo;
        const std::string t = Trim(line);
        if (t.empty())
        {
            continue;
        }
        if (t[0] == '#')
        {
            const auto colon = t.find(':');
            if (colon != std::string::npos)
            {
                meta[Trim(t.substr(1, colon - 1))] = Trim(t.substr(colon + 1));
            }
            continue;
        }
        char* end = nullptr;
        const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
        if (t[0] == '-' || *end != '\0' || v > UINT32_MAX)
        {
            Fail(path,
                 "line " + std::to_string(lineNo) + " ('" + t
                     + "') is not a byte count: allowed integers in [0, 4294967295]");
        }
        trace.m_bytes.push_back(static_cast<uint32_t>(v));
    }
    if (meta.count("interval_us") == 0)
    {
        Fail(path, "has no '# interval_us:' header line");
    }
    const std::string iv = meta["interval_us"];
    if (iv != std::to_string(intervalUs))
    {
        Fail(path,
             "has interval_us " + iv + ": the cell's TTI is " + std::to_string(intervalUs)
                 + " us (write the series at the cell's slot_s)");
    }
    if (trace.m_bytes.empty())
    {
        Fail(path, "holds no values");
    }
    if (meta.count("intervals") && meta["intervals"] != std::to_string(trace.m_bytes.size()))
    {
        Fail(path,
             "announces " + meta["intervals"] + " intervals but holds "
                 + std::to_string(trace.m_bytes.size()));
    }
    trace.m_intervalUs = intervalUs;
    return trace;
}

uint32_t
CapacityTrace::BytesAt(uint64_t index) const
{
    return m_bytes[index % m_bytes.size()];
}

uint64_t
CapacityTrace::IndexAt(Time t) const
{
    return static_cast<uint64_t>(t.GetMicroSeconds()) / m_intervalUs;
}

uint32_t
CapacityTrace::BytesAt(Time t) const
{
    return BytesAt(IndexAt(t));
}

uint32_t
CapacityTrace::PeakBytes() const
{
    return *std::max_element(m_bytes.begin(), m_bytes.end());
}

size_t
CapacityTrace::Size() const
{
    return m_bytes.size();
}

} // namespace ns3

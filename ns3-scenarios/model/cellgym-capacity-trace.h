// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_CAPACITY_TRACE_H
#define CELLGYM_CAPACITY_TRACE_H

#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @brief A cell's capacity per TTI (NR: slot), read from the file cellgym.traces writes
 * (`# cellgym-capacity v1`, `# key: value` header lines, then one byte count per interval; see
 * docs/traces.md). The series loops at its end.
 */
class CapacityTrace
{
  public:
    /**
     * @brief Read `path`; exit with status 2 and a message naming --capacityTrace when the file
     * is missing, its header is not a capacity file's, its interval is not `intervalUs`, or a
     * value is not a non-negative integer.
     */
    static CapacityTrace Load(const std::string& path, uint32_t intervalUs);

    /// @return the bytes of interval `index` (looped)
    uint32_t BytesAt(uint64_t index) const;
    /// @return the index of the interval holding time `t`
    uint64_t IndexAt(Time t) const;
    /// @return the bytes of the interval holding time `t`
    uint32_t BytesAt(Time t) const;
    /// @return the largest value of the series
    uint32_t PeakBytes() const;
    /// @return the number of intervals of one loop
    size_t Size() const;

  private:
    uint32_t m_intervalUs{1000};   //!< interval, microseconds
    std::vector<uint32_t> m_bytes; //!< bytes per interval
};

} // namespace ns3

#endif // CELLGYM_CAPACITY_TRACE_H

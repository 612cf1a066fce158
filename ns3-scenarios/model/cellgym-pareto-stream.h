// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_PARETO_STREAM_H
#define CELLGYM_PARETO_STREAM_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <ostream>
#include <vector>

namespace ns3
{

class CellGymSenderApp;

/**
 * @brief A stream of finite flows on reused sender slots (`traffic: pareto`, as the fast model's
 * envs/fastsim/workload.py).
 *
 * Flows arrive with exponential inter-arrival times; their sizes, in packets, follow the Pareto
 * distribution of a shape bounded to [L, H], L chosen so that the mean is the configured one;
 * a size is the draw rounded to whole packets (at least one). Both are the run's draws
 * (cellgym/draws.py, `--draws`), the same as the fast model's. An arrival takes a free slot (a
 * fresh TCP connection of the slot's sender) or waits, first in first out. A flow is finished
 * when the receiver has its last byte; its record is its size, arrival, start, end and FCT (end -
 * arrival, a wait for a slot included). The slot is free again once its sender has every ACK.
 */
class CellGymParetoStream : public Object
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    /// @brief A finished flow.
    struct Record
    {
        uint32_t stream{0};   //!< the stream's index
        uint32_t slot{0};     //!< the slot's flow index in the scenario
        uint64_t sizePkts{0}; //!< size, packets
        double arrivalMs{0};  //!< arrival, ms
        double startMs{0};    //!< start on a slot, ms
        double doneMs{0};     //!< last byte received, ms
    };

    /**
     * @brief Configure the arrivals (the run's draws).
     * @param index the stream's index (records)
     * @param afterMs arrival times, ms after the stream's start (non-decreasing)
     * @param sizePkts their sizes, packets
     */
    void Configure(uint32_t index,
                   const std::vector<double>& afterMs,
                   const std::vector<uint64_t>& sizePkts);

    /**
     * @brief Add a slot: a pareto sender app.
     * @param app the sender
     */
    void AddSlot(Ptr<CellGymSenderApp> app);

    /**
     * @brief Start the arrivals after this time.
     * @param first the arrivals' times count from it
     */
    void Start(Time first);

    /// @param out where finished flows are written as CSV rows (nullptr: nowhere)
    void SetLog(std::shared_ptr<std::ostream> out);

    /// @return the finished flows so far
    const std::vector<Record>& Finished() const;

    /**
     * @brief A slot's flow finished at the receiver.
     * @param slot the slot's index in this stream
     * @return its FCT, s (from its arrival)
     */
    double OnFlowDone(uint32_t slot);

    /**
     * @brief A slot's sender has every ACK: the slot is free.
     * @param slot the slot's index in this stream
     */
    void OnSlotFree(uint32_t slot);

  private:
    /// @brief Flow `i` arrives: queue it, schedule the next arrival.
    void Arrive(size_t i);
    /// @brief Hand waiting flows to free slots.
    void Dispatch();

    struct Pending
    {
        uint64_t sizePkts; //!< size
        double arrivalMs;  //!< arrival
    };

    uint32_t m_index{0};                        //!< stream index
    std::vector<double> m_afterMs;              //!< arrivals, ms after the start
    std::vector<uint64_t> m_sizePkts;           //!< their sizes
    Time m_first;                               //!< the stream's start
    std::vector<Ptr<CellGymSenderApp>> m_slots; //!< the slots
    std::vector<bool> m_busy;                   //!< a slot's flow or its ACKs outstanding
    std::vector<Record> m_current;              //!< each slot's flow
    std::deque<Pending> m_waiting;              //!< arrivals waiting for a slot
    std::vector<Record> m_finished;             //!< finished flows
    std::shared_ptr<std::ostream> m_log;        //!< CSV rows
};

} // namespace ns3

#endif // CELLGYM_PARETO_STREAM_H

// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_PARETO_STREAM_H
#define CELLGYM_PARETO_STREAM_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"

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
 * a size is the draw rounded to whole packets (at least one). An arrival takes a free slot (a
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
     * @brief Configure the distribution.
     * @param index the stream's index (records)
     * @param shape Pareto shape (> 1)
     * @param meanPkts mean of the bounded distribution, packets
     * @param cutoffPkts its upper bound, packets
     * @param iatMs mean inter-arrival time, ms
     */
    void Configure(uint32_t index, double shape, double meanPkts, double cutoffPkts, double iatMs);

    /**
     * @brief Use these random streams (the scenario's stream counter).
     * @param stream the first stream number; two are used
     * @return the number of streams used
     */
    int64_t AssignStreams(int64_t stream);

    /**
     * @brief Add a slot: a pareto sender app.
     * @param app the sender
     */
    void AddSlot(Ptr<CellGymSenderApp> app);

    /**
     * @brief Start the arrivals after this time.
     * @param first the first arrival is drawn after it
     */
    void Start(Time first);

    /// @param out where finished flows are written as CSV rows (nullptr: nowhere)
    void SetLog(std::shared_ptr<std::ostream> out);

    /// @return the finished flows so far
    const std::vector<Record>& Finished() const;

    /// @return the lower bound L of the bounded Pareto distribution, packets
    double Low() const;

    /**
     * @brief A size in packets from a uniform draw (the inverse CDF, rounded, at least 1).
     * @param u uniform in [0, 1)
     * @return packets
     */
    uint64_t SizeOf(double u) const;

    /**
     * @brief Mean of the Pareto distribution of a shape bounded to [low, high].
     * @param low L
     * @param high H
     * @param shape a
     * @return the mean
     */
    static double BoundedMean(double low, double high, double shape);

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
    /// @brief A flow arrives: queue it, draw the next arrival.
    void Arrive();
    /// @brief Hand waiting flows to free slots.
    void Dispatch();

    struct Pending
    {
        uint64_t sizePkts; //!< size
        double arrivalMs;  //!< arrival
    };

    uint32_t m_index{0};                        //!< stream index
    double m_shape{1.2};                        //!< a
    double m_low{1};                            //!< L
    double m_high{40000};                       //!< H
    double m_tail{1};                           //!< 1 - (L / H)^a
    Ptr<ExponentialRandomVariable> m_iat;       //!< inter-arrival times, ms
    Ptr<UniformRandomVariable> m_uniform;       //!< uniforms of the sizes
    std::vector<Ptr<CellGymSenderApp>> m_slots; //!< the slots
    std::vector<bool> m_busy;                   //!< a slot's flow or its ACKs outstanding
    std::vector<Record> m_current;              //!< each slot's flow
    std::deque<Pending> m_waiting;              //!< arrivals waiting for a slot
    std::vector<Record> m_finished;             //!< finished flows
    std::shared_ptr<std::ostream> m_log;        //!< CSV rows
};

} // namespace ns3

#endif // CELLGYM_PARETO_STREAM_H

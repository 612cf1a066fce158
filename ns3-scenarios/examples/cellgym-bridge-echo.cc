// SPDX-License-Identifier: GPL-2.0-only
// A bridge test program without LTE: each step it sends obs {"x": [step, sum of last action, seed,
// ...]} and reads a Box [2] action. Flags make it crash or hang at a given step, so the Python
// side's failure handling can be tested against a real process.
#include "opengym-bridge.h"

#include "ns3/core-module.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t port = 0;
    uint32_t seed = 1;
    uint32_t steps = 10;
    uint32_t obsDim = 3;
    int crashAtStep = -1;
    int hangAtStep = -1;
    int recvTimeoutMs = 60000;
    CommandLine cmd(__FILE__);
    cmd.AddValue("openGymPort", "bridge port on 127.0.0.1", port);
    cmd.AddValue("simSeed", "seed, echoed in x[2]", seed);
    cmd.AddValue("steps", "steps before game over", steps);
    cmd.AddValue("obsDim", "observation length (>= 3)", obsDim);
    cmd.AddValue("crashAtStep", "abort at this step (-1: never)", crashAtStep);
    cmd.AddValue("hangAtStep", "stop answering at this step (-1: never)", hangAtStep);
    cmd.AddValue("recvTimeoutMs", "receive timeout, ms", recvTimeoutMs);
    cmd.Parse(argc, argv);
    if (port == 0 || obsDim < 3)
    {
        std::cerr << "openGymPort must be set and obsDim >= 3" << std::endl;
        return 2;
    }
    cellgym::OpenGymBridge bridge(static_cast<uint16_t>(port), recvTimeoutMs);
    cellgym::NamedBox x{"x", {obsDim}, {}, -1e6, 1e6};
    cellgym::NamedBox act{"action", {2}, {}, -1e6, 1e6};
    if (!bridge.Init({x}, act))
    {
        return 0;
    }
    double lastSum = 0;
    for (uint32_t step = 0; step <= steps; ++step)
    {
        if (static_cast<int>(step) == crashAtStep)
        {
            std::cerr << "echo: crashing on purpose at step " << step << std::endl;
            std::abort();
        }
        if (static_cast<int>(step) == hangAtStep)
        {
            std::cerr << "echo: hanging on purpose at step " << step << std::endl;
            std::this_thread::sleep_for(std::chrono::hours(1));
        }
        x.data.assign(obsDim, 0.0);
        x.data[0] = step;
        x.data[1] = lastSum;
        x.data[2] = seed;
        auto action = bridge.Step({x}, step == steps, "{\"step\": " + std::to_string(step) + "}");
        if (action.stop)
        {
            break;
        }
        lastSum = 0;
        for (double v : action.data)
        {
            lastSum += v;
        }
    }
    return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_SCENARIO_OPTIONS_H
#define CELLGYM_SCENARIO_OPTIONS_H

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

/// The scenario program's option values, as text, by name.
using OptionText = std::map<std::string, std::string>;

/**
 * @brief Read the command line as text: every option's default, then the values given, through
 * ns-3's CommandLine (which answers --PrintHelp, --version and ns-3's own options). A bare
 * argument or an unknown option exits with status 2.
 * @param argc argument count
 * @param argv arguments
 * @param program the program's source file (__FILE__: CommandLine names the program after it)
 * @param given set to the names given on the command line
 * @return every option's value, as text
 */
OptionText ReadScenarioOptions(int argc,
                               char* argv[],
                               const std::string& program,
                               std::set<std::string>& given);

/**
 * @brief Exit with status 2: the option's value is invalid, and what it allows.
 * @param field the option (or flows[i].key)
 * @param value the value given
 * @param allowed what the option accepts
 */
[[noreturn]] void
BadArg(const std::string& field, const std::string& value, const std::string& allowed);

/**
 * @brief The non-empty items of a list.
 * @param text the list
 * @param sep the separator
 * @return the items
 */
std::vector<std::string> Split(const std::string& text, char sep);

/**
 * @brief A number in [low, high], or exit with status 2 (BadArg).
 * @param field the option
 * @param value its text
 * @param low lowest value allowed
 * @param high highest value allowed
 * @return the number
 */
double ParseDouble(const std::string& field, const std::string& value, double low, double high);

/**
 * @brief An integer in [low, high] (decimal digits only), or exit with status 2 (BadArg).
 * @param field the option
 * @param value its text
 * @param low lowest value allowed
 * @param high highest value allowed
 * @return the integer
 */
uint64_t ParseUint(const std::string& field, const std::string& value, uint64_t low, uint64_t high);

} // namespace ns3

#endif // CELLGYM_SCENARIO_OPTIONS_H

// The order in which `wakebench run` runs the repetitions of its cases: interleaved, so that a
// case's repetitions sample the whole run's drift rather than one stretch of it (Kalibera and
// Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013; Google Benchmark's
// --benchmark_enable_random_interleaving does the same). Round r runs the r-th repetition of every
// case that has one, in an order shuffled afresh each round; the shuffle is a function of the seed
// alone (mt19937_64, whose output the standard fixes, and a Fisher-Yates of our own), so a seed
// recorded in a result set reproduces its order on any machine and compiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wb {

// Case indices, one entry per repetition: repetitions[i] entries of i in all.
std::vector<size_t> interleaved_order(const std::vector<int>& repetitions, uint64_t seed);

}  // namespace wb

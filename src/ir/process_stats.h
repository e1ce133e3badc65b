#pragma once
// graphsub's one reader of this process's statistics (Linux; getrusage and the process CPU
// clock): what the optimizer, the generator and the benchmarks report as peak memory and
// processor time.
#include <cstdint>

namespace graphsub {

// Peak resident memory of this process so far (the kernel's high-water mark, the VmHWM of
// /proc/self/status), in bytes and in MiB; 0 where the system does not say.
uint64_t process_peak_rss_bytes();
double process_peak_rss_mib();
// Resident memory of this process now (VmRSS of /proc/self/status), in bytes; 0 where the
// system does not say.
uint64_t process_rss_bytes();

// Processor time of this process so far (all its threads), in seconds with nanosecond
// resolution.
double process_cpu_seconds();

}  // namespace graphsub

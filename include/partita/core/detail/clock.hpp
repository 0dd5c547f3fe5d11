#pragma once
/// `std::chrono::steady_clock` and durations, without the rest of <chrono>.
// Since C++20, libstdc++'s <chrono> carries calendars, time zones and their stream I/O (it
// includes <sstream>), which every file including the runtime would parse for a clock read.
// libstdc++ keeps the clocks and durations in <bits/chrono.h> (what <thread> itself includes);
// other standard libraries get <chrono>.
#include <version>  // defines __GLIBCXX__ for libstdc++

#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is Linux's USER_HZ, the unit of utime and stime in
// /proc/PID/stat (`getconf CLK_TCK`): 100 on every architecture Go runs
// Linux on, fixed in the kernel's ABI.
const clockTicks = 100

// processCPU is the CPU time, user plus system, that process pid has
// used so far, in seconds, from /proc/PID/stat.
func processCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read process CPU time: %w", err)
	}
	utime, stime, err := parseProcStat(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return float64(utime+stime) / clockTicks, nil
}

// parseProcStat returns utime and stime, in clock ticks, from the text of
// /proc/PID/stat. The command name (field 2) is in parentheses and may
// hold spaces and parentheses itself, so fields are counted from the last
// ')': after it come state (field 3) and on, utime and stime being fields
// 14 and 15.
func parseProcStat(stat string) (utime, stime uint64, err error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("no command name in %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	const utimeAt, stimeAt = 14 - 3, 15 - 3 // indexes after the name
	if len(fields) <= stimeAt {
		return 0, 0, fmt.Errorf("%d fields after the command name, want at least %d", len(fields), stimeAt+1)
	}
	if utime, err = strconv.ParseUint(fields[utimeAt], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("utime: %w", err)
	}
	if stime, err = strconv.ParseUint(fields[stimeAt], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("stime: %w", err)
	}
	return utime, stime, nil
}

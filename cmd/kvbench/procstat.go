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

// hostTimes is the machine's CPU time so far, in clock ticks, from the
// first line of /proc/stat: all of it (user, nice, system, idle, iowait,
// irq, softirq and steal; guest time is already inside user), and steal,
// the time the hypervisor ran other guests while this one had work ready.
type hostTimes struct {
	total, steal uint64
}

// readHostTimes reads hostTimes from /proc/stat.
func readHostTimes() (hostTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return hostTimes{}, fmt.Errorf("read host CPU time: %w", err)
	}
	h, err := parseHostTimes(string(b))
	if err != nil {
		return hostTimes{}, fmt.Errorf("/proc/stat: %w", err)
	}
	return h, nil
}

// parseHostTimes parses the "cpu" line of /proc/stat's text: its first
// eight figures, steal being the eighth.
func parseHostTimes(stat string) (hostTimes, error) {
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	const stealAt = 8
	if len(fields) <= stealAt || fields[0] != "cpu" {
		return hostTimes{}, fmt.Errorf("first line %q: want \"cpu\" and at least %d figures", line, stealAt)
	}
	var h hostTimes
	for i := 1; i <= stealAt; i++ {
		v, err := strconv.ParseUint(fields[i], 10, 64)
		if err != nil {
			return hostTimes{}, fmt.Errorf("figure %d of %q: %w", i, line, err)
		}
		h.total += v
		if i == stealAt {
			h.steal = v
		}
	}
	return h, nil
}

// stolenShare is the share of the machine's CPU time between a and b
// that the hypervisor gave to other guests: 0 on a machine of its own,
// and a sign that a measurement taken meanwhile is not comparable with
// one taken in quiet (on the 2-core VMs here, runs with a fifth of the
// time stolen spent up to twice the server CPU per request of quiet ones,
// through slower caches and costlier wake-ups).
func stolenShare(a, b hostTimes) float64 {
	if b.total <= a.total || b.steal < a.steal {
		return 0
	}
	return float64(b.steal-a.steal) / float64(b.total-a.total)
}

package shard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits on CPU numbers and lists, as named constants.
const (
	// CPUNumberMax is the largest CPU number accepted anywhere (the kernel's
	// CPU sets in x/sys hold 1024 CPUs).
	CPUNumberMax = 1023
	// cpuListTextMax bounds the length of a CPU list read from sysfs.
	cpuListTextMax = 64 << 10
)

// ErrCPUList is wrapped by every CPU list parse error.
var ErrCPUList = errors.New("shard: malformed CPU list")

// ParseCPUList parses the kernel's CPU list syntax used throughout sysfs
// ("0-3,8,10-11", possibly empty, trailing newline allowed) into ascending,
// distinct CPU numbers.
func ParseCPUList(text string) ([]int, error) {
	if len(text) > cpuListTextMax {
		return nil, fmt.Errorf("%w: %d bytes is longer than %d", ErrCPUList, len(text), cpuListTextMax)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	var present [CPUNumberMax + 1]bool
	for _, part := range strings.Split(text, ",") {
		low, high, isRange := strings.Cut(part, "-")
		first, err := parseCPUNumber(low)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrCPUList, text, err)
		}
		last := first
		if isRange {
			if last, err = parseCPUNumber(high); err != nil {
				return nil, fmt.Errorf("%w: %q: %w", ErrCPUList, text, err)
			}
			if last < first {
				return nil, fmt.Errorf("%w: %q: range %s ends before it starts", ErrCPUList, text, part)
			}
		}
		for cpu := first; cpu <= last; cpu++ {
			present[cpu] = true
		}
	}
	var cpus []int
	for cpu, isPresent := range present {
		if isPresent {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, nil
}

// parseCPUNumber parses one decimal CPU number within 0..CPUNumberMax.
func parseCPUNumber(text string) (int, error) {
	return parseNumberAtMost(text, CPUNumberMax)
}

// parseNumberAtMost parses a decimal number within 0..limit.
func parseNumberAtMost(text string, limit int) (int, error) {
	text = strings.TrimSpace(text)
	if text == "" || strings.IndexFunc(text, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, fmt.Errorf("%q is not a CPU number", text)
	}
	number, err := strconv.Atoi(text)
	if err != nil || number > limit {
		return 0, fmt.Errorf("CPU %s is above the largest supported CPU number %d", text, limit)
	}
	return number, nil
}

// FormatCPUList renders ascending CPU numbers in the kernel's list syntax,
// for logs ("0-3,8").
func FormatCPUList(cpus []int) string {
	var text strings.Builder
	for index := 0; index < len(cpus); {
		end := index
		for end+1 < len(cpus) && cpus[end+1] == cpus[end]+1 {
			end++
		}
		if text.Len() > 0 {
			text.WriteByte(',')
		}
		text.WriteString(strconv.Itoa(cpus[index]))
		if end > index {
			text.WriteByte('-')
			text.WriteString(strconv.Itoa(cpus[end]))
		}
		index = end + 1
	}
	return text.String()
}

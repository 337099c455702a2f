package simulator

import (
	"hash/fnv"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
)

// realNanos reads CLOCK_MONOTONIC by a system call: inside a synctest
// bubble, package time reads the bubble's clock.
func realNanos() int64 {
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// bubbleWork is CPU work in the place of a schedule's steps between two
// ticks (a few hundred microseconds, as in a KubeRay schedule).
func bubbleWork(buf []byte) uint64 {
	h := fnv.New64a()
	for range 200 {
		_, _ = h.Write(buf)
	}
	return h.Sum64()
}

var bubbleSink uint64

// BenchmarkBubbleTick: what one tick's sleep costs in a synctest bubble
// (World.tick under SyncWallClock). Each op runs, in a bubble of its own,
// ten rounds of work each followed by a one-second sleep, and times each
// sleep with the real clock; tick-us is the real time per sleep. The sleep
// parks the only running goroutine of the bubble, which readies the
// bubble's root goroutine (blocked in synctest.Test); the root advances
// the bubble's clock, readies the sleeper and parks again. Each readying
// is the runtime's ready(), which wakes an idle thread whenever a
// processor is idle (-cpu 2 on an otherwise idle machine); with -cpu 1
// there is none to wake.
func BenchmarkBubbleTick(b *testing.B) {
	buf := make([]byte, 1024)
	var slept, worked int64
	for range b.N {
		synctest.Test(&testing.T{}, func(*testing.T) {
			for range 10 {
				start := realNanos()
				bubbleSink += bubbleWork(buf)
				mid := realNanos()
				time.Sleep(time.Second)
				worked += mid - start
				slept += realNanos() - mid
			}
		})
	}
	b.ReportMetric(float64(slept)/float64(10*b.N)/1e3, "tick-us")
	b.ReportMetric(float64(worked)/float64(10*b.N)/1e3, "work-us")
}

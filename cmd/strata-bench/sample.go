package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/term"
)

// sample starts the timeline sampler (and the live progress line when
// live and stderr is a terminal). The returned stop function ends it and
// clears the line.
func (r *run) sample(res *Result, live bool) (stop func()) {
	live = live && term.IsTerminal(int(os.Stderr.Fd()))
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		ticker := time.NewTicker(samplePeriod)
		defer ticker.Stop()
		var lastP, lastC uint64
		last := time.Now()
		for {
			select {
			case <-done:
				if live {
					fmt.Fprint(os.Stderr, "\r\033[K")
				}
				return
			case now := <-ticker.C:
				p, c := r.producedBytes.Load(), r.consumedBytes.Load()
				secs := now.Sub(last).Seconds()
				pt := TimelinePoint{Seconds: now.Sub(r.measureFrom).Seconds(),
					ProducerMBps: rate(p-lastP, secs) / bytesPerMB, ConsumerMBps: rate(c-lastC, secs) / bytesPerMB}
				if pt.Seconds > 0 {
					res.Timeline = append(res.Timeline, pt)
				}
				lastP, lastC, last = p, c, now
				if live {
					phase := "measuring"
					if pt.Seconds <= 0 {
						phase = "warming up"
					}
					fmt.Fprintf(os.Stderr, "\r\033[K%s %s: %5.1fs  producers %8.1f MB/s  consumers %8.1f MB/s  verified %d",
						r.w.Name, phase, pt.Seconds, pt.ProducerMBps, pt.ConsumerMBps, r.verified.Load())
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

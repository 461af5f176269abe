package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/term"
)

// sample starts the sampler of a run with the given numbers of measured
// producers and consumers (0: the run has no such role) and the live
// progress line when live and stderr is a terminal. The actors' meters
// are ready when it returns; the returned stop function takes the last
// interval, stores the series in res.Series and clears the line.
func (r *run) sample(res *Result, live bool, producers, consumers int) (stop func()) {
	live = live && term.IsTerminal(int(os.Stderr.Fd()))
	m := &meters{}
	if producers > 0 {
		m.producers = newMeters(producers)
	}
	if consumers > 0 {
		m.consumers = newMeters(consumers)
	}
	if r.w.Mode == ModeEndToEnd {
		m.e2e = newMeter()
	}
	r.meters = m
	planned := r.w.Duration
	if r.w.Batches > 0 {
		planned = 0
	}
	sp := newSampler(m, r.measureFrom, samplePeriodFor(planned))
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		ticker := time.NewTicker(sp.period)
		defer ticker.Stop()
		lastPrint, printed := time.Now(), sp.totals
		for {
			select {
			case <-done:
				sp.tick(time.Now(), true)
				res.Series = sp.s
				if live {
					fmt.Fprint(os.Stderr, "\r\033[K")
				}
				return
			case now := <-ticker.C:
				period := sp.period
				sp.tick(now, false)
				if sp.period != period {
					ticker.Reset(sp.period)
				}
				if !live || now.Sub(lastPrint) < progressPeriod {
					continue
				}
				secs := now.Sub(lastPrint).Seconds()
				phase := "measuring"
				if !now.After(r.measureFrom) {
					phase = "warming up"
				}
				fmt.Fprintf(os.Stderr, "\r\033[K%s %s: %5.1fs  producers %8.1f MB/s  consumers %8.1f MB/s  verified %d",
					r.w.Name, phase, now.Sub(r.measureFrom).Seconds(),
					rate(sp.totals[0]-printed[0], secs)/bytesPerMB, rate(sp.totals[1]-printed[1], secs)/bytesPerMB, r.verified.Load())
				lastPrint, printed = now, sp.totals
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

package vsr

// timer counts ticks while running and fires every after ticks.
type timer struct {
	after   uint64
	count   uint64
	running bool
}

func (t *timer) start() {
	t.running = true
	t.count = 0
}

func (t *timer) stop() { t.running = false }

func (t *timer) reset() { t.count = 0 }

// fired reports (once per period) whether the timer has run out, and
// restarts the period.
func (t *timer) fired() bool {
	if t.running && t.count >= t.after {
		t.count = 0
		return true
	}
	return false
}

// timers holds every timeout of a replica.
type timers struct {
	ticks           uint64
	commitHeartbeat timer
	normalHeartbeat timer
	prepare         timer
	viewChange      timer
	repair          timer
	recovery        timer
}

func (ts *timers) init(cfg *Config) {
	ts.commitHeartbeat.after = cfg.CommitHeartbeatTicks
	ts.normalHeartbeat.after = cfg.NormalHeartbeatTimeoutTicks
	ts.prepare.after = cfg.PrepareTimeoutTicks
	ts.viewChange.after = cfg.ViewChangeTimeoutTicks
	ts.repair.after = cfg.RepairTimeoutTicks
	ts.recovery.after = cfg.RecoveryTimeoutTicks
}

func (ts *timers) all() [6]*timer {
	return [6]*timer{&ts.commitHeartbeat, &ts.normalHeartbeat, &ts.prepare, &ts.viewChange, &ts.repair, &ts.recovery}
}

func (ts *timers) tick() {
	ts.ticks++
	for _, t := range ts.all() {
		if t.running {
			t.count++
		}
	}
}

func (ts *timers) stopAll() {
	for _, t := range ts.all() {
		t.stop()
	}
}

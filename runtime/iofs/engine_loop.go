package iofs

// loop is the submitter goroutine: the only code that touches the ring.
func (e *loopEngine) loop() {
	defer close(e.stopped)
	for {
		if e.busy() == 0 {
			// Nothing in flight: block until a request or Close arrives.
			req, ok := <-e.requests
			if !ok {
				break
			}
			e.start(req)
		}
		if !e.gather() {
			break
		}
		if e.busy() == 0 {
			continue
		}
		e.sleep()
	}
	e.loopErr = e.shutdown()
}

// gather starts up to the event interval queued requests without
// blocking. It returns false once the request channel is closed.
func (e *loopEngine) gather() bool {
	for i := 0; i < e.interval; i++ {
		select {
		case req, ok := <-e.requests:
			if !ok {
				return false
			}
			e.start(req)
		default:
			return true
		}
	}
	return true
}

// sleep submits what is queued and waits for at least one completion,
// unless a caller has announced a request meanwhile.
func (e *loopEngine) sleep() {
	e.sleeping.Store(true)
	if e.posted.Load() != e.taken {
		e.sleeping.Store(false)
		e.submit()
		return
	}
	e.must(e.ring.SubmitAndWait(1))
	e.sleeping.Store(false)
}

func (e *loopEngine) submit() {
	_, err := e.ring.Submit()
	e.must(err)
}

func (e *loopEngine) must(err error) { mustEnter(e.ring, err) }

// start queues one request on the ring (its callback finishes it).
func (e *loopEngine) start(req *request) {
	e.taken++
	if err := prepareRequest(e.ring, req); err != nil {
		req.fail(err)
	}
}

// shutdown finishes every operation in flight, retires the wake-up read
// and closes the ring and the eventfd.
func (e *loopEngine) shutdown() error {
	for e.busy() > 0 {
		e.must(e.ring.SubmitAndWait(1))
	}
	e.stopping = true
	return e.waker.close(e.ring)
}

// close stops accepting requests, waits for the loop to finish what is in
// flight and returns its error.
func (e *loopEngine) close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.closed = true
	close(e.requests)
	e.mu.Unlock()
	<-e.stopped
	return e.loopErr
}

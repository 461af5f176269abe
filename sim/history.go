package sim

// HistoryKind is the kind of a client operation in the history.
type HistoryKind uint8

const (
	// HistoryAppend is append(value) → position.
	HistoryAppend HistoryKind = iota
	// HistoryRead is read(position) → value or absent.
	HistoryRead
)

// HistoryEntry is one client operation: its invocation, and its response if
// one arrived. Times are event sequence numbers (strictly increasing across
// the run), ticks are for people.
type HistoryEntry struct {
	Client     int
	Request    uint64
	Kind       HistoryKind
	Argument   uint64 // append: the value; read: the position
	CallTime   int64
	CallTick   uint64
	Completed  bool
	ReturnTime int64
	ReturnTick uint64
	Op         uint64 // the op that committed it (from the reply)
	Position   uint64 // append result
	Found      bool   // read result
	Value      uint64 // read result
}

// History is the record of every client operation of a run, in invocation
// order.
type History struct {
	Entries []HistoryEntry
	time    int64
}

// Invoke records the start of an operation and returns its index.
func (h *History) Invoke(client int, request uint64, kind HistoryKind, argument uint64, tick uint64) int {
	h.time++
	h.Entries = append(h.Entries, HistoryEntry{
		Client: client, Request: request, Kind: kind, Argument: argument,
		CallTime: h.time, CallTick: tick,
	})
	return len(h.Entries) - 1
}

// Return records the response of operation index.
func (h *History) Return(index int, tick, op uint64, position uint64, found bool, value uint64) {
	h.time++
	e := &h.Entries[index]
	e.Completed = true
	e.ReturnTime = h.time
	e.ReturnTick = tick
	e.Op = op
	e.Position = position
	e.Found = found
	e.Value = value
}

// Outstanding returns the number of operations without a response.
func (h *History) Outstanding() int {
	n := 0
	for i := range h.Entries {
		if !h.Entries[i].Completed {
			n++
		}
	}
	return n
}

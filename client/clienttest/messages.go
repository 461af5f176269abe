package clienttest

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/net/wire"
)

// send handles SendMessages (§6.4, §6.5).
func (s *Server) send(r *body) answer {
	metaLen := r.u32()
	metaStart := r.pos
	sid, tid := r.ident(), r.ident()
	kind, n := r.u8(), int(r.u8())
	value := r.take(n)
	count := r.u32()
	if r.bad || uint32(r.pos-metaStart) != metaLen {
		return deny(wire.ErrResourceNotFound)
	}
	batch := r.rest()
	str := s.state.findStream(sid)
	if str == nil {
		return deny(wire.ErrResourceNotFound)
	}
	t := str.findTopic(tid)
	if t == nil || len(t.partitions) == 0 {
		return deny(wire.ErrResourceNotFound)
	}
	var pid uint32
	switch {
	case kind == 1 && n == 0:
		pid = t.roundRobin % uint32(len(t.partitions))
		t.roundRobin++
	case kind == 2 && n == 4:
		pid = binary.LittleEndian.Uint32(value)
	case kind == 3 && n > 0:
		pid = uint32(xxh3.Hash(value) % uint64(len(t.partitions)))
	default:
		return deny(wire.ErrResourceNotFound)
	}
	if int(pid) >= len(t.partitions) {
		return deny(wire.ErrResourceNotFound)
	}
	if err := wire.ValidateSendBatch(batch, count); err != nil {
		return deny(wire.ErrorCode(wire.BatchErrorCode(err)))
	}
	p := t.partitions[pid]
	stored := append([]byte(nil), batch...)
	base := p.next
	if err := wire.StampBatch(stored, uint64(pid), base, s.state.now()); err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	p.batches = append(p.batches, stored)
	p.next += uint64(count)
	b := le32(nil, 1)
	b = le32(b, str.id)
	b = le32(b, t.id)
	b = le32(b, pid)
	return ok(le64(b, base))
}

// poll handles PollMessages for individual consumers (§6.6).
func (s *Server) poll(r *body) answer {
	kind := r.u8()
	cid := r.ident()
	sid, tid := r.ident(), r.ident()
	hasPartition := r.u8()
	pid := r.u32()
	strategy := r.u8()
	value := r.u64()
	count := r.u32()
	autoCommit := r.u8() != 0
	empty := func(pid uint32) answer { return ok(le32(le64(le32(nil, pid), 0), 0)) }
	if r.bad || (kind != 1 && kind != 2) || strategy < 1 || strategy > 5 {
		return empty(0)
	}
	if hasPartition != 1 {
		pid = 0
	}
	str := s.state.findStream(sid)
	if str == nil {
		return deny(wire.ErrStreamIdNotFound)
	}
	t := str.findTopic(tid)
	if t == nil {
		return deny(wire.ErrTopicIdNotFound)
	}
	if int(pid) >= len(t.partitions) {
		return deny(wire.ErrPartitionNotFound)
	}
	p := t.partitions[pid]
	key := string(rune('0'+kind)) + cid.key()
	current := p.currentOffset()
	var start uint64
	switch strategy {
	case 1:
		start = value
	case 2:
		start = p.next
		for _, b := range p.batches {
			v := wire.BatchView(b)
			if v.BaseTimestamp() >= value {
				start = v.BaseOffset()
				break
			}
		}
	case 3:
		start = 0
	case 4:
		if count > 0 && current >= uint64(count-1) {
			start = current - uint64(count-1)
		}
	case 5:
		if stored, found := p.offsets[key]; found {
			start = stored + 1
		}
	}
	out := le32(nil, pid)
	out = le64(out, current)
	out = le32(out, 0)
	if p.next == 0 || count == 0 || start > current {
		return ok(out)
	}
	var total uint32
	var last uint64
	from := start
	for _, b := range p.batches {
		if total >= count {
			break
		}
		var n uint32
		var err error
		before := len(out)
		out, n, err = wire.SliceBatch(out, b, from, count-total)
		if err != nil {
			return deny(wire.ErrInvalidCommand)
		}
		if n > 0 {
			v := wire.BatchView(out[before:])
			it := v.Frames()
			for {
				f, more := it.Next()
				if !more {
					break
				}
				last = v.BaseOffset() + uint64(f.OffsetDelta())
			}
			from = last + 1
		}
		total += n
	}
	binary.LittleEndian.PutUint32(out[12:], total)
	if autoCommit && total > 0 {
		if prev, found := p.offsets[key]; !found || last > prev {
			p.offsets[key] = last
		}
	}
	return ok(out)
}

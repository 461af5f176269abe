package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/connectors/plugin"
)

func init() { connectors.RegisterSource("random", func() plugin.Source { return &randomSource{} }) }

// Limits of the random source.
const (
	randomBatchMax   = 10_000
	randomTextMax    = 1 << 20
	randomDefaultLen = 16
)

// randomConfig is the random source's plugin_config.
type randomConfig struct {
	// MessagesPerBatch is how many messages one poll produces (default 10).
	MessagesPerBatch int `json:"messages_per_batch"`
	// MaxCount stops producing after that many messages in total,
	// counted across restarts through the state (0: no limit).
	MaxCount uint64 `json:"max_count"`
	// Interval is the pause between batches ("10ms", default none).
	Interval string `json:"interval"`
	// TextLength is the length of each message's random text.
	TextLength int `json:"text_length"`
}

// randomState is what the source keeps in its state file.
type randomState struct {
	Count uint64 `json:"count"`
}

// randomSource produces JSON messages {"id": n, "text": "...", "created_at": micros}
// with ids 0, 1, 2... continuing after a restart from the saved count.
type randomSource struct {
	cfg      randomConfig
	interval time.Duration
	next     uint64
	rng      *rand.Rand
}

func (s *randomSource) Open(_ context.Context, req plugin.OpenRequest) error {
	if err := decodeConfig(req.Config, &s.cfg); err != nil {
		return err
	}
	if s.cfg.MessagesPerBatch == 0 {
		s.cfg.MessagesPerBatch = 10
	}
	if s.cfg.MessagesPerBatch < 0 || s.cfg.MessagesPerBatch > randomBatchMax {
		return fmt.Errorf("%w: messages_per_batch %d outside 1..%d", ErrConfig, s.cfg.MessagesPerBatch, randomBatchMax)
	}
	if s.cfg.TextLength == 0 {
		s.cfg.TextLength = randomDefaultLen
	}
	if s.cfg.TextLength < 0 || s.cfg.TextLength > randomTextMax {
		return fmt.Errorf("%w: text_length %d", ErrConfig, s.cfg.TextLength)
	}
	if s.cfg.Interval != "" {
		d, err := durationOr(s.cfg.Interval, 0)
		if err != nil {
			return fmt.Errorf("interval: %w", err)
		}
		s.interval = d
	}
	if len(req.State) > 0 {
		var st randomState
		if err := json.Unmarshal(req.State, &st); err != nil {
			return fmt.Errorf("random source: state: %w", err)
		}
		s.next = st.Count
	}
	s.rng = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(req.ID)))
	return nil
}

const letters = "abcdefghijklmnopqrstuvwxyz"

func (s *randomSource) Poll(ctx context.Context) (plugin.ProducedBatch, error) {
	if s.interval > 0 {
		select {
		case <-ctx.Done():
			return plugin.ProducedBatch{}, ctx.Err()
		case <-time.After(s.interval):
		}
	}
	n := uint64(s.cfg.MessagesPerBatch)
	if s.cfg.MaxCount > 0 {
		if s.next >= s.cfg.MaxCount {
			return plugin.ProducedBatch{}, ctx.Err()
		}
		n = min(n, s.cfg.MaxCount-s.next)
	}
	out := plugin.ProducedBatch{Messages: make([]plugin.ProducedMessage, 0, n)}
	text := make([]byte, s.cfg.TextLength)
	for i := uint64(0); i < n; i++ {
		for j := range text {
			text[j] = letters[s.rng.IntN(len(letters))]
		}
		payload, err := json.Marshal(map[string]any{"id": s.next, "text": string(text), "created_at": time.Now().UnixMicro()})
		if err != nil {
			return plugin.ProducedBatch{}, err
		}
		out.Messages = append(out.Messages, plugin.ProducedMessage{ID: s.next + 1, Payload: payload})
		s.next++
	}
	state, err := json.Marshal(randomState{Count: s.next})
	if err != nil {
		return plugin.ProducedBatch{}, err
	}
	out.State = state
	return out, nil
}

func (s *randomSource) Report(context.Context, plugin.BatchResult) error { return nil }

func (s *randomSource) Close(context.Context) error { return nil }

package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
)

// Limits of the message commands.
const (
	// sendBatchBytesMax caps one SendMessages batch well below the 64 MiB
	// frame limit.
	sendBatchBytesMax = 16 << 20
	// sendBatchSizeDefault is the default number of messages per batch.
	sendBatchSizeDefault = 1000
	// stdinLineMax is the longest stdin line (one message payload).
	stdinLineMax = client.PayloadSizeMax
	// pollChunkMax is the most messages one poll request asks for.
	pollChunkMax = 1000
	// progressPollMin is the --count from which poll shows a progress bar.
	progressPollMin = 2 * pollChunkMax
)

func newMessageCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "message",
		Short: "Send and poll messages",
	}
	cmd.AddCommand(newSendCommand(a), newPollCommand(a))
	return cmd
}

// sendFlags are the flags of message send.
type sendFlags struct {
	partition uint32
	key       string
	headers   []string
	batchSize int
}

func newSendCommand(a *app) *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:   "send STREAM TOPIC [MESSAGE...]",
		Short: "Send messages (arguments, or stdin one message per line)",
		Long: `Sends each MESSAGE argument as one message. Without MESSAGE arguments it
reads standard input and sends every non-empty line as one message (the
newline is not part of the payload), in batches of --batch-size messages.
A progress bar is shown on a terminal when reading standard input.

Partitioning: --partition N sends to partition N, --key K lets the server
pick the partition from the key, otherwise partitions are used round-robin.
--header key=value (repeatable) adds a string-kind user header to every
message.

  strata message send orders eu "first order" "second order"
  strata message send orders eu --partition 2 --header source=cli hello
  strata message send orders eu --key customer-42 < orders.txt`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.send(cmd.Context(), cmd, args, f)
		},
	}
	fs := cmd.Flags()
	fs.Uint32Var(&f.partition, "partition", 0, "send to this partition id")
	fs.StringVar(&f.key, "key", "", "messages key: the server picks the partition from it")
	fs.StringArrayVar(&f.headers, "header", nil, "user header key=value (string kind), repeatable")
	fs.IntVar(&f.batchSize, "batch-size", sendBatchSizeDefault, "messages per batch")
	return cmd
}

// sendSummary is the JSON form of a send.
type sendSummary struct {
	Messages int    `json:"messages"`
	Batches  int    `json:"batches"`
	Bytes    uint64 `json:"bytes"`
}

// send implements message send.
func (a *app) send(ctx context.Context, cmd *cobra.Command, args []string, f sendFlags) error {
	if f.batchSize < 1 {
		return usagef("--batch-size must be at least 1")
	}
	partitioning := client.Balanced()
	switch {
	case cmd.Flags().Changed("partition") && f.key != "":
		return usagef("--partition and --key are mutually exclusive")
	case cmd.Flags().Changed("partition"):
		partitioning = client.PartitionID(f.partition)
	case f.key != "":
		if len(f.key) > 255 {
			return usagef("--key must be at most 255 bytes")
		}
		partitioning = client.MessagesKey([]byte(f.key))
	}
	headers := make([]client.Header, 0, len(f.headers))
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" || v == "" {
			return usagef("--header must be key=value with both non-empty, got %q", h)
		}
		headers = append(headers, client.StringHeader(k, v))
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	s := &sender{ctx: ctx, c: c, stream: client.ParseIdentifier(args[0]), topic: client.ParseIdentifier(args[1]),
		partitioning: partitioning, headers: headers, batchSize: f.batchSize}
	if len(args) > 2 {
		for _, m := range args[2:] {
			if err := s.add([]byte(m)); err != nil {
				return err
			}
		}
	} else if err := s.readLines(a.Stdin, a.newProgress(inputSize(a.Stdin), "sending", true)); err != nil {
		return err
	}
	if err := s.flush(); err != nil {
		return err
	}
	if s.sum.Messages == 0 {
		return usagef("no messages to send (give MESSAGE arguments or non-empty lines on stdin)")
	}
	return a.printer().message(s.sum, fmt.Sprintf("sent %d messages (%s) in %d batches",
		s.sum.Messages, bytesText(s.sum.Bytes), s.sum.Batches))
}

// sender accumulates payloads into batches. Payload bytes live in one
// reused arena; message slices are cut from it at flush time.
type sender struct {
	ctx          context.Context
	c            *client.Client
	stream       client.Identifier
	topic        client.Identifier
	partitioning client.Partitioning
	headers      []client.Header
	batchSize    int

	arena []byte
	ends  []int
	msgs  []client.Message
	sum   sendSummary
}

func (s *sender) add(payload []byte) error {
	if len(payload) == 0 {
		return nil
	}
	if len(s.ends) > 0 && (len(s.ends) >= s.batchSize || len(s.arena)+len(payload) > sendBatchBytesMax) {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.arena = append(s.arena, payload...)
	s.ends = append(s.ends, len(s.arena))
	return nil
}

func (s *sender) flush() error {
	if len(s.ends) == 0 {
		return nil
	}
	s.msgs = s.msgs[:0]
	start := 0
	for _, end := range s.ends {
		s.msgs = append(s.msgs, client.Message{Payload: s.arena[start:end], Headers: s.headers})
		start = end
	}
	if _, err := s.c.SendMessages(s.ctx, s.stream, s.topic, s.partitioning, s.msgs); err != nil {
		return fmt.Errorf("after %d messages sent: %w", s.sum.Messages, err)
	}
	s.sum.Messages += len(s.ends)
	s.sum.Batches++
	s.sum.Bytes += uint64(len(s.arena))
	s.arena, s.ends = s.arena[:0], s.ends[:0]
	return nil
}

// readLines sends every non-empty line of r.
func (s *sender) readLines(r io.Reader, bar *progress) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), stdinLineMax+1)
	for sc.Scan() {
		line := sc.Bytes()
		if err := bar.add(len(line) + 1); err != nil {
			return err
		}
		if err := s.add(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("a stdin line is longer than %d bytes: %w", stdinLineMax, err)
		}
		return fmt.Errorf("reading stdin: %w", err)
	}
	return bar.finish()
}

// pollFlags are the flags of message poll.
type pollFlags struct {
	partition  uint32
	offset     uint64
	timestamp  string
	first      bool
	last       bool
	next       bool
	count      uint32
	consumer   string
	autoCommit bool
	follow     bool
	interval   time.Duration
}

func newPollCommand(a *app) *cobra.Command {
	var f pollFlags
	cmd := &cobra.Command{
		Use:   "poll STREAM TOPIC",
		Short: "Poll messages from a partition",
		Long: `Polls up to --count messages from one partition, starting at --offset N,
--timestamp T (micros since the epoch or RFC 3339: the first batch appended
at or after T), --first (default), --last (the last --count messages) or
--next (after the consumer's stored offset). --auto-commit stores the last
returned offset for --consumer. --follow keeps polling for new messages
until interrupted (Ctrl-C). A progress bar is shown on a terminal for large
--count values.

Table output prints one line per message: offset, timestamp, id, headers,
payload. JSON output (--output json) prints one object per message:
  {"offset":5,"id":"0","timestamp":1700000000000000,"origin_timestamp":...,
   "headers":{"source":"cli"},"payload":"hello"}
"id" is the 128-bit message id as a decimal string; timestamps are micros
since the epoch ("timestamp" is the server append time). "payload" is the
payload as a UTF-8 string when it is valid UTF-8; otherwise it is base64
(standard, padded) and the object carries "payload_encoding":"base64".

  strata message poll orders eu --first --count 100
  strata message poll orders eu --partition 2 --offset 1000 --count 50
  strata message poll orders eu --next --consumer reporter --auto-commit --follow`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.poll(cmd.Context(), cmd, args, f)
		},
	}
	fs := cmd.Flags()
	fs.Uint32Var(&f.partition, "partition", 0, "partition id")
	fs.Uint64Var(&f.offset, "offset", 0, "start at this offset")
	fs.StringVar(&f.timestamp, "timestamp", "", "start at this time (micros since the epoch or RFC 3339)")
	fs.BoolVar(&f.first, "first", false, "start at the first message (default)")
	fs.BoolVar(&f.last, "last", false, "return the last --count messages")
	fs.BoolVar(&f.next, "next", false, "start after the consumer's stored offset")
	fs.Uint32Var(&f.count, "count", 10, "number of messages")
	fs.StringVar(&f.consumer, "consumer", "0", "consumer id or name (for --next and --auto-commit)")
	fs.BoolVar(&f.autoCommit, "auto-commit", false, "store the last returned offset for the consumer")
	fs.BoolVar(&f.follow, "follow", false, "keep polling for new messages until interrupted")
	f.interval = 500 * time.Millisecond
	fs.Var(durationFlag{&f.interval}, "interval", `pause between polls that return nothing (--follow), such as "500ms" or "2 s"`)
	return cmd
}

// strategy picks the polling strategy from the flags.
func (f *pollFlags) strategy(cmd *cobra.Command) (client.PollingStrategy, error) {
	chosen := 0
	s := client.PollFirst()
	if cmd.Flags().Changed("offset") {
		chosen++
		s = client.PollOffset(f.offset)
	}
	if f.timestamp != "" {
		chosen++
		t, err := parseTimestamp(f.timestamp)
		if err != nil {
			return s, err
		}
		s = client.PollTimestamp(t)
	}
	for _, b := range []struct {
		on bool
		s  client.PollingStrategy
	}{{f.first, client.PollFirst()}, {f.last, client.PollLast()}, {f.next, client.PollNext()}} {
		if b.on {
			chosen++
			s = b.s
		}
	}
	if chosen > 1 {
		return s, usagef("give at most one of --offset, --timestamp, --first, --last, --next")
	}
	return s, nil
}

// parseTimestamp reads micros since the epoch or an RFC 3339 time.
func parseTimestamp(s string) (uint64, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.UnixMicro() < 0 {
		return 0, usagef("--timestamp must be micros since the epoch or RFC 3339, got %q", s)
	}
	return uint64(t.UnixMicro()), nil
}

// polledMessage is the JSON form of one polled message.
type polledMessage struct {
	Offset          uint64            `json:"offset"`
	ID              string            `json:"id"`
	Timestamp       uint64            `json:"timestamp"`
	OriginTimestamp uint64            `json:"origin_timestamp"`
	Headers         map[string]string `json:"headers,omitempty"`
	Payload         string            `json:"payload"`
	PayloadEncoding string            `json:"payload_encoding,omitempty"`
}

func toPolled(m *client.Message) polledMessage {
	pm := polledMessage{Offset: m.Offset, ID: m.ID.String(), Timestamp: m.Timestamp,
		OriginTimestamp: m.OriginTimestamp}
	if utf8.Valid(m.Payload) {
		pm.Payload = string(m.Payload)
	} else {
		pm.Payload = base64.StdEncoding.EncodeToString(m.Payload)
		pm.PayloadEncoding = "base64"
	}
	if len(m.Headers) > 0 {
		pm.Headers = make(map[string]string, len(m.Headers))
		for _, h := range m.Headers {
			pm.Headers[h.Key.String()] = h.Value.String()
		}
	}
	return pm
}

// printMessage prints one polled message.
func (a *app) printMessage(p *printer, m *client.Message) error {
	pm := toPolled(m)
	if p.json {
		return p.jsonLine(pm)
	}
	var hs []string
	for _, h := range m.Headers {
		hs = append(hs, h.Key.String()+"="+h.Value.String())
	}
	headers := "-"
	if len(hs) > 0 {
		headers = strings.Join(hs, ",")
	}
	payload := pm.Payload
	if pm.PayloadEncoding != "" {
		payload = "base64:" + payload
	}
	_, err := fmt.Fprintf(p.w, "%d\t%s\t%s\t%s\t%s\n", m.Offset, micros(m.Timestamp), pm.ID, headers, payload)
	return err
}

// poll implements message poll.
func (a *app) poll(ctx context.Context, cmd *cobra.Command, args []string, f pollFlags) error {
	strategy, err := f.strategy(cmd)
	if err != nil {
		return err
	}
	if f.count == 0 {
		return usagef("--count must be at least 1")
	}
	if f.follow && f.interval <= 0 {
		return usagef("--interval must be positive")
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	req := client.PollRequest{Consumer: consumerFlag(f.consumer), Stream: client.ParseIdentifier(args[0]),
		Topic: client.ParseIdentifier(args[1]), Partition: f.partition, Strategy: strategy, AutoCommit: f.autoCommit}
	bar := &progress{}
	if !f.follow && f.count >= progressPollMin {
		bar = a.newProgress(int64(f.count), "polling", false)
	}
	p := a.printer()
	var polled client.PolledMessages
	var received uint64
	for f.follow || received < uint64(f.count) {
		req.Count = pollChunkMax
		if !f.follow {
			req.Count = uint32(min(uint64(pollChunkMax), uint64(f.count)-received))
		}
		if err := c.PollMessagesInto(ctx, req, &polled); err != nil {
			if f.follow && ctx.Err() != nil {
				return nil // interrupted
			}
			return err
		}
		for i := range polled.Messages {
			if err := a.printMessage(p, &polled.Messages[i]); err != nil {
				return err
			}
		}
		received += uint64(len(polled.Messages))
		if err := bar.add(len(polled.Messages)); err != nil {
			return err
		}
		if n := len(polled.Messages); n > 0 {
			// Continue after the last message; --next with auto-commit
			// keeps using the stored offset.
			if !(strategy.Kind == client.StrategyNext && f.autoCommit) {
				req.Strategy = client.PollOffset(polled.Messages[n-1].Offset + 1)
			}
			continue
		}
		if !f.follow {
			break
		}
		if req.Strategy.Kind == client.StrategyLast {
			// Nothing yet: follow from the start of the partition.
			req.Strategy = client.PollFirst()
		}
		if err := waitOrDone(ctx, f.interval); err != nil {
			return nil // interrupted
		}
	}
	return bar.finish()
}

// waitOrDone waits d or until ctx ends (then returns its error).
func waitOrDone(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
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
		Use:     "message",
		Aliases: []string{"m", "messages", "msg"},
		Short:   "Send and poll messages",
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
	inputFile string
}

func newSendCommand(a *app) *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:     "send STREAM TOPIC [MESSAGE...]",
		Aliases: []string{"s", "pub", "publish"},
		Short:   "Send messages (arguments, a file as one message, or stdin one message per line)",
		Long: `Sends each MESSAGE argument as one message. --input-file FILE sends the
whole file as one message, byte for byte (--input-file - reads standard
input whole). Otherwise it reads standard input and sends every non-empty
line as one message (the newline is not part of the payload), in batches
of --batch-size messages; a progress bar is shown on a terminal.

Partitioning: --partition N sends to partition N, --key K lets the server
pick the partition from the key, otherwise partitions are used round-robin.
The summary says which partitions the messages went to, and at which
offsets.

Headers: --header (-H) KEY:KIND:VALUE adds a typed user header to every
message, as Iggy's CLI takes it; KIND is raw, string, bool, int8, int16,
int32, int64, int128, uint8, uint16, uint32, uint64, uint128, float32 or
float64. Several may be given comma separated or by repeating the flag.
KEY=VALUE is short for KEY:string:VALUE.

  strata message send orders eu "first order" "second order"
  strata message send orders eu --partition 2 -H source:string:cli,attempt:uint32:1 hello
  strata message send orders eu --key customer-42 < orders.txt
  strata message send orders eu --input-file invoice.pdf`,
		Args:        cobra.MinimumNArgs(2),
		Annotations: argsAre("stream topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.send(cmd.Context(), cmd, args, f)
		},
	}
	fs := cmd.Flags()
	fs.Uint32Var(&f.partition, "partition", 0, "send to this partition id")
	fs.StringVar(&f.key, "key", "", "messages key: the server picks the partition from it")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "user header KEY:KIND:VALUE (or KEY=VALUE, a string), comma separated or repeated")
	fs.IntVar(&f.batchSize, "batch-size", sendBatchSizeDefault, "messages per batch")
	fs.StringVar(&f.inputFile, "input-file", "", "send this file as one message (- reads stdin whole)")
	return cmd
}

// partitionSent is where a send's messages went, per partition.
type partitionSent struct {
	PartitionID uint32 `json:"partition_id"`
	Messages    int    `json:"messages"`
	FirstOffset uint64 `json:"first_offset"`
	LastOffset  uint64 `json:"last_offset"`
}

// sendSummary is the JSON form of a send.
type sendSummary struct {
	Messages int    `json:"messages"`
	Batches  int    `json:"batches"`
	Bytes    uint64 `json:"bytes"`
	// Partitions lists where the messages went; messages of batches the
	// server did not confirm with an offset are not in it.
	Partitions []partitionSent `json:"partitions"`
}

// plural is "1 message", "2 messages", "3 batches".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	if strings.HasSuffix(one, "ch") {
		return strconv.Itoa(n) + " " + one + "es"
	}
	return strconv.Itoa(n) + " " + one + "s"
}

// text is the one-line table form.
func (s *sendSummary) text() string {
	out := fmt.Sprintf("sent %s (%s) in %s", plural(s.Messages, "message"), bytesText(s.Bytes), plural(s.Batches, "batch"))
	if len(s.Partitions) == 0 {
		return out
	}
	parts := make([]string, len(s.Partitions))
	for i, p := range s.Partitions {
		offsets := "offset " + u64(p.FirstOffset)
		if p.LastOffset != p.FirstOffset {
			offsets = "offsets " + u64(p.FirstOffset) + ".." + u64(p.LastOffset)
		}
		parts[i] = fmt.Sprintf("%d (%s)", p.PartitionID, offsets)
		if len(s.Partitions) > 1 {
			parts[i] = fmt.Sprintf("%d (%s, %s)", p.PartitionID, plural(p.Messages, "message"), offsets)
		}
	}
	if len(parts) == 1 {
		return out + " to partition " + parts[0]
	}
	return out + " to partitions " + strings.Join(parts, ", ")
}

// send implements message send.
func (a *app) send(ctx context.Context, cmd *cobra.Command, args []string, f sendFlags) error {
	if f.batchSize < 1 {
		return usagef("--batch-size must be at least 1")
	}
	if f.inputFile != "" && len(args) > 2 {
		return usagef("give MESSAGE arguments or --input-file, not both")
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
	headers, err := parseHeaders(f.headers)
	if err != nil {
		return err
	}
	var file []byte
	if f.inputFile != "" {
		if file, err = a.readInputFile(f.inputFile); err != nil {
			return err
		}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	s := &sender{ctx: ctx, c: c, stream: client.ParseIdentifier(args[0]), topic: client.ParseIdentifier(args[1]),
		partitioning: partitioning, headers: headers, batchSize: f.batchSize}
	switch {
	case file != nil:
		if err := s.add(file); err != nil {
			return err
		}
	case len(args) > 2:
		for _, m := range args[2:] {
			if err := s.add([]byte(m)); err != nil {
				return err
			}
		}
	default:
		if err := s.readLines(a.Stdin, a.newProgress(inputSize(a.Stdin), "sending", true)); err != nil {
			return err
		}
	}
	if err := s.flush(); err != nil {
		return err
	}
	if s.sum.Messages == 0 {
		return usagef("no messages to send (give MESSAGE arguments, --input-file, or non-empty lines on stdin)")
	}
	if s.binaryLines > 0 {
		fmt.Fprintf(a.Stderr, "warning: %d of the stdin lines were not text; each line was sent as its own message "+
			"(send a file as one message with --input-file FILE)\n", s.binaryLines)
	}
	s.sum.Partitions = make([]partitionSent, 0, len(s.parts))
	for _, p := range s.parts {
		s.sum.Partitions = append(s.sum.Partitions, *p)
	}
	sort.Slice(s.sum.Partitions, func(i, j int) bool { return s.sum.Partitions[i].PartitionID < s.sum.Partitions[j].PartitionID })
	return a.printer().message(s.sum, s.sum.text())
}

// readInputFile reads --input-file: a file, or stdin for "-".
func (a *app) readInputFile(name string) ([]byte, error) {
	var r io.Reader = a.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("--input-file: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, client.PayloadSizeMax+1))
	if err != nil {
		return nil, fmt.Errorf("--input-file %s: %w", name, err)
	}
	switch {
	case len(b) == 0:
		return nil, usagef("--input-file %s is empty (a message needs at least one byte)", name)
	case len(b) > client.PayloadSizeMax:
		return nil, usagef("--input-file %s is larger than a message may be (%d bytes)", name, client.PayloadSizeMax)
	}
	return b, nil
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
	// parts aggregates the confirmations by partition.
	parts map[uint32]*partitionSent
	// binaryLines counts stdin lines that were not UTF-8 text.
	binaryLines int
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
	confirmations, err := s.c.SendMessages(s.ctx, s.stream, s.topic, s.partitioning, s.msgs)
	if err != nil {
		if s.sum.Messages > 0 {
			return fmt.Errorf("after %d messages sent: %w", s.sum.Messages, err)
		}
		return err
	}
	n := len(s.ends)
	if len(confirmations) == 1 {
		// One confirmation per batch: its partition and first offset.
		c := confirmations[0]
		if s.parts == nil {
			s.parts = map[uint32]*partitionSent{}
		}
		p := s.parts[c.PartitionID]
		if p == nil {
			p = &partitionSent{PartitionID: c.PartitionID, FirstOffset: c.BaseOffset}
			s.parts[c.PartitionID] = p
		}
		p.Messages += n
		p.FirstOffset = min(p.FirstOffset, c.BaseOffset)
		p.LastOffset = max(p.LastOffset, c.BaseOffset+uint64(n)-1)
	}
	s.sum.Messages += n
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
		if len(line) > 0 && (!utf8.Valid(line) || bytes.IndexByte(line, 0) >= 0) {
			s.binaryLines++
		}
		if err := s.add(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("a stdin line is longer than %d bytes (send it with --input-file): %w", stdinLineMax, err)
		}
		return fmt.Errorf("reading stdin: %w", err)
	}
	return bar.finish()
}

// pollFlags are the flags of message poll.
type pollFlags struct {
	partition   uint32
	offset      uint64
	timestamp   string
	first       bool
	last        bool
	next        bool
	count       uint32
	consumer    string
	autoCommit  bool
	follow      bool
	interval    time.Duration
	showHeaders bool
	outputFile  string
}

func newPollCommand(a *app) *cobra.Command {
	var f pollFlags
	cmd := &cobra.Command{
		Use:     "poll STREAM TOPIC",
		Aliases: []string{"p", "sub", "consume"},
		Short:   "Poll messages from a partition",
		Long: `Polls up to --count messages from one partition, starting at --offset N,
--timestamp T (micros since the epoch or RFC 3339: the first batch appended
at or after T), --first (default), --last (the last --count messages) or
--next (after the consumer's stored offset). --auto-commit stores the last
returned offset for --consumer. --follow keeps polling for new messages
until interrupted (Ctrl-C). A progress bar is shown on a terminal for large
--count values.

Table output has a header row, then one tab-separated line per message:
OFFSET, TIMESTAMP, ID, the HEADERS (with --show-headers, as KEY:KIND:VALUE
comma separated) and the PAYLOAD (as text when it is UTF-8, else
"base64:" and its base64). JSON output (--output json) prints one object
per message (schema in cmd/strata/README.md):
  {"offset":5,"id":"0","timestamp":1700000000000000,"origin_timestamp":...,
   "headers":[{"key":"source","kind":"string","value":"cli"}],
   "payload":"hello","payload_encoding":"utf-8"}
--output-file FILE writes the payloads, byte for byte and one after the
other, to FILE (created or truncated) instead of printing the messages; a
single polled message round-trips a file sent with --input-file.

  strata message poll orders eu --first --count 100
  strata message poll orders eu --partition 2 --offset 1000 --count 50 --show-headers
  strata message poll orders eu --next --consumer reporter --auto-commit --follow
  strata message poll orders eu --offset 7 --count 1 --output-file invoice.pdf`,
		Args:        cobra.ExactArgs(2),
		Annotations: map[string]string{argsAnnotation: "stream topic", "strata.partition": "always"},
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
	fs.BoolVar(&f.showHeaders, "show-headers", false, "add a HEADERS column to the table (JSON always has them)")
	fs.StringVar(&f.outputFile, "output-file", "", "write the payloads to this file instead of printing the messages")
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

// headerRecord is one user header in JSON.
type headerRecord struct {
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// polledMessage is the JSON form of one polled message.
type polledMessage struct {
	Offset          uint64         `json:"offset"`
	ID              string         `json:"id"`
	Timestamp       uint64         `json:"timestamp"`
	OriginTimestamp uint64         `json:"origin_timestamp"`
	Headers         []headerRecord `json:"headers"`
	Payload         string         `json:"payload"`
	// PayloadEncoding is "utf-8" (Payload is the text) or "base64".
	PayloadEncoding string `json:"payload_encoding"`
}

func toPolled(m *client.Message) polledMessage {
	pm := polledMessage{Offset: m.Offset, ID: m.ID.String(), Timestamp: m.Timestamp,
		OriginTimestamp: m.OriginTimestamp, Headers: make([]headerRecord, 0, len(m.Headers))}
	if utf8.Valid(m.Payload) {
		pm.Payload, pm.PayloadEncoding = string(m.Payload), "utf-8"
	} else {
		pm.Payload, pm.PayloadEncoding = base64.StdEncoding.EncodeToString(m.Payload), "base64"
	}
	for _, h := range m.Headers {
		pm.Headers = append(pm.Headers, headerRecord{Key: headerValueText(h.Key), Kind: h.Value.Kind.String(), Value: headerValueText(h.Value)})
	}
	return pm
}

// pollHeaderRow is the table's header row.
func pollHeaderRow(showHeaders bool) string {
	if showHeaders {
		return "OFFSET\tTIMESTAMP\tID\tHEADERS\tPAYLOAD\n"
	}
	return "OFFSET\tTIMESTAMP\tID\tPAYLOAD\n"
}

// printMessage prints one polled message.
func (a *app) printMessage(p *printer, m *client.Message, showHeaders bool) error {
	pm := toPolled(m)
	if p.json {
		return p.jsonLine(pm)
	}
	payload := pm.Payload
	if pm.PayloadEncoding == "base64" {
		payload = "base64:" + payload
	}
	if !showHeaders {
		_, err := fmt.Fprintf(p.w, "%d\t%s\t%s\t%s\n", m.Offset, micros(m.Timestamp), pm.ID, payload)
		return err
	}
	hs := make([]string, len(pm.Headers))
	for i, h := range pm.Headers {
		hs[i] = h.Key + ":" + h.Kind + ":" + h.Value
	}
	headers := "-"
	if len(hs) > 0 {
		headers = strings.Join(hs, ",")
	}
	_, err := fmt.Fprintf(p.w, "%d\t%s\t%s\t%s\t%s\n", m.Offset, micros(m.Timestamp), pm.ID, headers, payload)
	return err
}

// pollWritten is the JSON form of a poll into --output-file.
type pollWritten struct {
	Messages int    `json:"messages"`
	Bytes    uint64 `json:"bytes"`
	File     string `json:"file"`
}

// poll implements message poll.
func (a *app) poll(ctx context.Context, cmd *cobra.Command, args []string, f pollFlags) (err error) {
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
	var out *os.File
	var written pollWritten
	if f.outputFile != "" {
		if out, err = os.Create(f.outputFile); err != nil {
			return usagef("--output-file: %v", err)
		}
		written.File = f.outputFile
		defer func() {
			if cerr := out.Close(); cerr != nil && err == nil {
				err = cerr
			}
			if err == nil {
				err = p.message(written, fmt.Sprintf("wrote %s (%s) to %s", plural(written.Messages, "message"), bytesText(written.Bytes), written.File))
			}
		}()
	}
	headerPrinted := false
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
		if out == nil && !p.json && !headerPrinted {
			if _, err := io.WriteString(p.w, pollHeaderRow(f.showHeaders)); err != nil {
				return err
			}
			headerPrinted = true
		}
		for i := range polled.Messages {
			m := &polled.Messages[i]
			if out != nil {
				if _, err := out.Write(m.Payload); err != nil {
					return fmt.Errorf("--output-file: %w", err)
				}
				written.Messages++
				written.Bytes += uint64(len(m.Payload))
				continue
			}
			if err := a.printMessage(p, m, f.showHeaders); err != nil {
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

package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/cmd/internal/command"
	"github.com/stratabroker/strata/net/wire"
)

// Every error the CLI prints reads "error: MESSAGE (CODE NAME)": what went
// wrong, naming the stream, topic or address involved, then Apache Iggy's
// error code and name. Server failures carry the server's code; failures
// on this side are given the code Iggy's SDK uses for them.

// explainTimeout bounds the lookups that name a missing stream or topic.
const explainTimeout = 5 * time.Second

// argsAnnotation lists, in order, what a command's positional arguments
// name: "stream", "topic", "partition", "group" or "user" (or "-" for
// anything else). It drives error messages (subject) and the dynamic
// shell completion.
const argsAnnotation = "strata.args"

// subject is what the running command works on.
type subject struct {
	stream, topic, group string
	// partition is set when the command names one (argument or a
	// --partition flag it uses).
	partition *uint32
}

// subjectOf reads the subject from cmd's arguments and flags.
func subjectOf(cmd *cobra.Command, args []string) subject {
	var s subject
	for i, kind := range strings.Fields(cmd.Annotations[argsAnnotation]) {
		if i >= len(args) {
			break
		}
		switch kind {
		case "stream":
			s.stream = args[i]
		case "topic":
			s.topic = args[i]
		case "group":
			s.group = args[i]
		case "partition":
			if n, err := strconv.ParseUint(args[i], 10, 32); err == nil {
				p := uint32(n)
				s.partition = &p
			}
		}
	}
	if f := cmd.Flags().Lookup("partition"); f != nil && s.partition == nil {
		// Poll and the offset commands always use --partition; send only
		// when given (else the server picks).
		if f.Changed || cmd.Annotations["strata.partition"] == "always" {
			if n, err := strconv.ParseUint(f.Value.String(), 10, 32); err == nil {
				p := uint32(n)
				s.partition = &p
			}
		}
	}
	return s
}

// notFoundError is a stream, topic, partition... that does not exist.
type notFoundError struct {
	// what names it: "stream orders", "topic eu of stream orders".
	what string
	// detail follows "not found": "; it has partitions 0..2".
	detail string
	code   wire.ErrorCode
	// err is the server's answer, when there was one.
	err error
}

func (e *notFoundError) Error() string {
	return e.what + " not found" + e.detail + " (" + codeText(e.code) + ")"
}

func (e *notFoundError) Unwrap() error {
	if e.err != nil {
		return e.err
	}
	return e.code
}

// codeText is "1009 StreamIdNotFound".
func codeText(c wire.ErrorCode) string {
	return strconv.FormatUint(uint64(c), 10) + " " + c.String()
}

// notFoundCodes are the answers that may mean a missing stream, topic,
// partition or consumer group.
func isNotFoundCode(c wire.ErrorCode) bool {
	switch c {
	case wire.ErrResourceNotFound, wire.ErrStreamIdNotFound, wire.ErrStreamNameNotFound,
		wire.ErrTopicIdNotFound, wire.ErrTopicNameNotFound, wire.ErrPartitionNotFound,
		wire.ErrConsumerGroupIdNotFound, wire.ErrConsumerGroupNameNotFound:
		return true
	}
	return false
}

// byID picks the id or the name flavour of a not-found code, as the
// argument is a number or a name.
func byID(arg string, id, name wire.ErrorCode) wire.ErrorCode {
	if _, err := strconv.ParseUint(arg, 10, 32); err == nil {
		return id
	}
	return name
}

// notFoundAs names the missing object when a read found nothing (the
// server answers an unknown id with an empty body, client.ErrNotFound).
func notFoundAs(err error, code wire.ErrorCode, format string, args ...any) error {
	if errors.Is(err, client.ErrNotFound) {
		return &notFoundError{what: fmt.Sprintf(format, args...), code: code, err: err}
	}
	return err
}

// explain turns a bare "not found" answer (20 ResourceNotFound says
// neither which stream nor which topic) into one that names the missing
// stream, topic, partition or consumer group, by looking them up. The
// code stays the server's. Any other error, or one the lookups cannot
// explain, is returned as it is.
//
// A read that found nothing (notFoundAs) is checked the same way: "topic
// eu of stream nosuch" is really "stream nosuch"; its code then follows
// the argument (1009 StreamIdNotFound for an id, 1010 for a name).
func (a *app) explain(ctx context.Context, err error) error {
	code := client.CodeOf(err)
	s := a.subject
	var nf *notFoundError
	emptyRead := errors.As(err, &nf) && errors.Is(err, client.ErrNotFound)
	if s.stream == "" || !isNotFoundCode(code) && !emptyRead {
		return err
	}
	codeFor := func(arg string, id, name wire.ErrorCode) wire.ErrorCode {
		if emptyRead {
			return byID(arg, id, name)
		}
		return code
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), explainTimeout)
	defer cancel()
	c := a.client
	stream := client.ParseIdentifier(s.stream)
	if _, gerr := c.GetStream(ctx, stream); errors.Is(gerr, client.ErrNotFound) {
		return &notFoundError{what: "stream " + s.stream, code: codeFor(s.stream, wire.ErrStreamIdNotFound, wire.ErrStreamNameNotFound), err: err}
	} else if gerr != nil || s.topic == "" {
		return err
	}
	topic := client.ParseIdentifier(s.topic)
	t, gerr := c.GetTopic(ctx, stream, topic)
	if errors.Is(gerr, client.ErrNotFound) {
		return &notFoundError{what: "topic " + s.topic + " of stream " + s.stream, code: codeFor(s.topic, wire.ErrTopicIdNotFound, wire.ErrTopicNameNotFound), err: err}
	} else if gerr != nil {
		return err
	}
	if emptyRead {
		return err // stream and topic exist: the read's own message stands
	}
	if s.partition != nil {
		found := false
		for _, p := range t.Partitions {
			found = found || p.ID == *s.partition
		}
		if !found {
			return &notFoundError{what: fmt.Sprintf("partition %d of topic %s/%s", *s.partition, s.stream, s.topic),
				detail: "; it has " + partitionRange(t), code: code, err: err}
		}
	}
	if s.group != "" {
		if _, gerr := c.GetConsumerGroup(ctx, stream, topic, client.ParseIdentifier(s.group)); errors.Is(gerr, client.ErrNotFound) {
			return &notFoundError{what: "consumer group " + s.group + " of topic " + s.stream + "/" + s.topic, code: code, err: err}
		}
	}
	return err
}

// partitionRange describes a topic's partition ids: "partitions 0..2",
// "partition 0" or "no partitions".
func partitionRange(t *client.TopicDetails) string {
	switch n := len(t.Partitions); n {
	case 0:
		return "no partitions"
	case 1:
		return fmt.Sprintf("partition %d", t.Partitions[0].ID)
	default:
		return fmt.Sprintf("partitions %d..%d", t.Partitions[0].ID, t.Partitions[n-1].ID)
	}
}

// errorCode is the Iggy error code an error is reported with.
func errorCode(err error) wire.ErrorCode {
	var nf *notFoundError
	var code wire.ErrorCode
	var opErr *net.OpError
	switch {
	case errors.As(err, &nf):
		return nf.code
	case client.CodeOf(err) != wire.ErrorCodeOK:
		return client.CodeOf(err)
	case errors.Is(err, client.ErrCannotConnect):
		return wire.ErrCannotEstablishConnection
	case errors.Is(err, client.ErrConnectionLost), errors.As(err, &opErr):
		return wire.ErrDisconnected
	case command.IsUsage(err):
		return wire.ErrInvalidCommand
	case errors.As(err, &code) && code != wire.ErrorCodeOK:
		return code
	case errors.Is(err, client.ErrInvalidArgument):
		return wire.ErrInvalidFormat
	case errors.Is(err, errContexts):
		return wire.ErrInvalidConfiguration
	}
	return wire.ErrError
}

// describe turns err into the one line the CLI prints after "error: ".
func describe(err error) string {
	msg := strings.ReplaceAll(err.Error(), "client: ", "")
	code := errorCode(err)
	if tag := "(" + codeText(code) + ")"; !strings.Contains(msg, tag) {
		msg += " " + tag
	}
	if code == wire.ErrUnauthenticated {
		msg += "; log in with --username/--password, --token, STRATA_USERNAME/STRATA_PASSWORD or a saved context (strata context --help)"
	}
	return msg
}

// exitCode maps an error to the CLI exit code.
func exitCode(err error) int {
	var opErr *net.OpError
	switch {
	case command.IsUsage(err):
		return exitUsage
	case errors.Is(err, client.ErrConnectionLost), errors.As(err, &opErr):
		return exitConnection
	}
	return exitError
}

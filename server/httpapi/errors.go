package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/stratabroker/strata/net/wire"
)

// retryAfterSeconds is the Retry-After sent with a 503 for the transient
// codes 57 and 58.
const retryAfterSeconds = 1

// Sentinel errors of the package. Handlers wrap them with %w; writeError
// turns them into the Iggy error JSON.
var (
	// ErrBadRequest is a request the gateway rejects before it reaches the
	// broker (bad JSON, bad query value, missing field): InvalidFormat.
	ErrBadRequest = errors.New("httpapi: bad request")
	// ErrTooManyLogins is a login refused by the failed-login limiter.
	ErrTooManyLogins = errors.New("httpapi: too many failed logins")
	// ErrLoginRateExceeded is a good login refused by the limiter of
	// successful logins per (user, address).
	ErrLoginRateExceeded = errors.New("httpapi: too many logins")
	// ErrBodyTooLarge is a request body over Config.BodyBytesMax.
	ErrBodyTooLarge = errors.New("httpapi: request body too large")
)

// apiError is an error with the Iggy code the JSON reports and, when it is
// known, the request field at fault.
type apiError struct {
	code   wire.ErrorCode
	field  string
	reason string
	// status overrides the status the code maps to (0 = use the map).
	status     int
	retryAfter int
	// sentinel is the package error the failure is an instance of, if any.
	sentinel error
}

func (e *apiError) Error() string { return e.reason }

// Unwrap lets errors.Is/As see the wire code and the sentinel.
func (e *apiError) Unwrap() []error {
	if e.sentinel != nil {
		return []error{e.code, e.sentinel}
	}
	return []error{e.code}
}

// fail builds an apiError with code and a formatted reason.
func fail(code wire.ErrorCode, field, format string, args ...any) *apiError {
	return &apiError{code: code, field: field, reason: fmt.Sprintf(format, args...)}
}

// badRequest is an InvalidFormat error naming the offending field.
func badRequest(field, format string, args ...any) error {
	return &apiError{code: wire.ErrInvalidFormat, field: field, sentinel: ErrBadRequest,
		reason: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON of every error response (Iggy's ErrorResponse).
type errorBody struct {
	ID     uint32  `json:"id"`
	Code   string  `json:"code"`
	Reason string  `json:"reason"`
	Field  *string `json:"field"`
}

// statusFor maps an Iggy error code to the HTTP status of PROTOCOL.md §11.
func statusFor(code wire.ErrorCode) int {
	switch code {
	case wire.ErrStreamIdNotFound, wire.ErrTopicIdNotFound, wire.ErrPartitionNotFound,
		wire.ErrSegmentNotFound, wire.ErrClientNotFound, wire.ErrConsumerGroupIdNotFound,
		wire.ErrConsumerGroupNameNotFound, wire.ErrConsumerGroupMemberNotFound,
		wire.ErrConsumerOffsetNotFound, wire.ErrResourceNotFound:
		return http.StatusNotFound
	case wire.ErrUnauthenticated, wire.ErrAccessTokenMissing, wire.ErrInvalidAccessToken,
		wire.ErrInvalidPersonalAccessToken:
		return http.StatusUnauthorized
	case wire.ErrUnauthorized:
		return http.StatusForbidden
	case wire.ErrTransientNotCommitted, wire.ErrTransientNotAccepted:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// fieldFor names the request field an error code is about, as Iggy does.
func fieldFor(code wire.ErrorCode) string {
	switch code {
	case wire.ErrStreamIdNotFound, wire.ErrInvalidStreamId:
		return "stream_id"
	case wire.ErrTopicIdNotFound, wire.ErrInvalidTopicId:
		return "topic_id"
	case wire.ErrPartitionNotFound:
		return "partition_id"
	case wire.ErrSegmentNotFound:
		return "segment_id"
	case wire.ErrClientNotFound:
		return "client_id"
	case wire.ErrInvalidStreamName, wire.ErrStreamNameAlreadyExists, wire.ErrInvalidTopicName,
		wire.ErrTopicNameAlreadyExists, wire.ErrConsumerGroupNameAlreadyExists,
		wire.ErrPersonalAccessTokenAlreadyExists:
		return "name"
	case wire.ErrInvalidOffset:
		return "offset"
	case wire.ErrInvalidConsumerGroupId:
		return "consumer_group_id"
	case wire.ErrUserAlreadyExists:
		return "username"
	}
	return ""
}

// snakeName turns a §8 name (StreamIdNotFound) into Iggy's JSON code
// (stream_id_not_found).
func snakeName(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// readableName turns StreamIdNotFound into "stream id not found".
func readableName(name string) string {
	return strings.ReplaceAll(snakeName(name), "_", " ")
}

// toAPIError classifies any error a handler returns.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) || errors.Is(err, ErrBodyTooLarge) {
		return &apiError{code: wire.ErrInvalidFormat, reason: ErrBodyTooLarge.Error(),
			status: http.StatusRequestEntityTooLarge, sentinel: ErrBodyTooLarge}
	}
	var code wire.ErrorCode
	if !errors.As(err, &code) {
		// An encoding failure in net/wire: InvalidCommand, as wire.CodeOf
		// reports it; say what it was.
		return &apiError{code: wire.ErrInvalidCommand, reason: err.Error()}
	}
	return &apiError{code: code, field: fieldFor(code), reason: readableName(code.String())}
}

// writeError writes the Iggy error JSON of ae with the mapped status.
func writeError(w http.ResponseWriter, ae *apiError) {
	status := ae.status
	if status == 0 {
		status = statusFor(ae.code)
	}
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		retry := ae.retryAfter
		if retry <= 0 {
			retry = retryAfterSeconds
		}
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
	}
	body := errorBody{ID: uint32(ae.code), Code: snakeName(ae.code.String()), Reason: ae.reason}
	if ae.field != "" {
		field := ae.field
		body.Field = &field
	}
	writeJSON(w, status, body)
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	// A failed write means the client went away; nothing is left to tell.
	_ = enc.Encode(v)
}

// writeEmpty answers a successful command that returns nothing.
func writeEmpty(w http.ResponseWriter, status int) {
	w.WriteHeader(status)
}

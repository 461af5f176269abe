package httpapi

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// metricValue reads one unlabelled series from a Prometheus text page.
func metricValue(t *testing.T, page []byte, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("series %q: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no series %s in:\n%s", name, page)
	return 0
}

func TestMetricsMove(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	before := h.expect(http.StatusOK, "GET", "/metrics", "", nil)
	if ct := before.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("metrics content type %q", ct)
	}
	appended := metricValue(t, before.body, "strata_messages_appended_total")
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "m"})
	h.expect(http.StatusOK, "POST", "/streams/m/topics", tok, map[string]any{"name": "t", "partitions_count": 1})
	h.expect(http.StatusCreated, "POST", "/streams/m/topics/t/messages", tok, map[string]any{
		"partitioning": map[string]any{"kind": "balanced"},
		"messages":     []map[string]any{{"payload": "YQ=="}, {"payload": "Yg=="}, {"payload": "Yw=="}},
	})
	h.expect(http.StatusOK, "GET", "/streams/m/topics/t/messages?count=3", tok, nil)
	after := h.expect(http.StatusOK, "GET", "/metrics", "", nil)
	if got := metricValue(t, after.body, "strata_messages_appended_total"); got != appended+3 {
		t.Fatalf("strata_messages_appended_total %v → %v, want +3", appended, got)
	}
	if got := metricValue(t, after.body, "strata_messages_polled_total"); got < 3 {
		t.Fatalf("strata_messages_polled_total %v", got)
	}
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	h := start(t, Config{BodyBytesMax: 1024})
	tok := h.root()
	e := h.expectError(http.StatusNotFound, 1009, "GET", "/streams/404", tok, nil)
	if e.Code != "stream_id_not_found" || e.Field == nil || *e.Field != "stream_id" || e.Reason == "" {
		t.Fatalf("not-found error %+v", e)
	}
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "dup"})
	e = h.expectError(http.StatusBadRequest, 1012, "POST", "/streams", tok, map[string]any{"name": "dup"})
	if e.Code != "stream_name_already_exists" || e.Field == nil || *e.Field != "name" {
		t.Fatalf("exists error %+v", e)
	}
	e = h.expectError(http.StatusBadRequest, 4, "POST", "/streams", tok, `{"name": `)
	if e.Code != "invalid_format" {
		t.Fatalf("bad JSON error %+v", e)
	}
	h.expectError(http.StatusBadRequest, 1013, "POST", "/streams", tok, map[string]any{})
	h.expectError(http.StatusNotFound, 2010, "GET", "/streams/dup/topics/nope", tok, nil)
	h.expectError(http.StatusNotFound, 1009, "GET", "/streams/nope/topics/nope", tok, nil)
	h.expectError(http.StatusBadRequest, 4, "POST", "/streams/dup/topics", tok, map[string]any{"name": "t"})
	h.expectError(http.StatusBadRequest, 4041, "POST", "/streams/dup/topics", tok, map[string]any{
		"name": "t", "partitions_count": 1, "options": map[string]string{"colour": "blue"}})
	h.expectError(http.StatusBadRequest, 4042, "POST", "/streams/dup/topics", tok, map[string]any{
		"name": "t", "partitions_count": 1, "options": map[string]string{"durability": "forever"}})
	h.expectError(http.StatusNotFound, 20, "GET", "/no/such/route", tok, nil)
	h.expectError(http.StatusNotFound, 100, "GET", "/clients/999999", tok, nil)
	r := h.expect(http.StatusRequestEntityTooLarge, "POST", "/streams", tok, `{"name":"`+strings.Repeat("x", 2048)+`"}`)
	if r.apiErr(t).ID != 4 {
		t.Fatalf("too large: %s", r.body)
	}
}

func TestConsumerOffsets(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "o"})
	h.expect(http.StatusOK, "POST", "/streams/o/topics", tok, map[string]any{"name": "t", "partitions_count": 1})
	msgs := make([]map[string]any, 10)
	for i := range msgs {
		msgs[i] = map[string]any{"payload": "eA=="}
	}
	h.expect(http.StatusCreated, "POST", "/streams/o/topics/t/messages", tok, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": 0}, "messages": msgs})
	const offsets = "/streams/o/topics/t/consumer-offsets"

	h.expectError(http.StatusNotFound, 3021, "GET", offsets+"?consumer_id=7&partition_id=0", tok, nil)
	h.expect(http.StatusNoContent, "PUT", offsets, tok, map[string]any{"consumer_id": 7, "partition_id": 0, "offset": 4})
	var off offsetJSON
	h.expect(http.StatusOK, "GET", offsets+"?consumer_id=7&partition_id=0", tok, nil).decode(t, &off)
	if off.StoredOffset != 4 || off.CurrentOffset != 9 || off.PartitionID != 0 {
		t.Fatalf("offset %+v", off)
	}
	h.expectError(http.StatusBadRequest, 4100, "PUT", offsets, tok, map[string]any{"consumer_id": 7, "partition_id": 0, "offset": 99})

	// "next" continues after the stored offset and auto-commit moves it.
	var polled polledMessagesJSON
	h.expect(http.StatusOK, "GET", "/streams/o/topics/t/messages?consumer_id=7&kind=next&count=3&auto_commit=true", tok, nil).decode(t, &polled)
	if len(polled.Messages) != 3 || polled.Messages[0].Header.Offset != 5 {
		t.Fatalf("next poll %+v", polled.Messages)
	}
	h.expect(http.StatusOK, "GET", offsets+"?consumer_id=7", tok, nil).decode(t, &off)
	if off.StoredOffset != 7 {
		t.Fatalf("after auto-commit %+v", off)
	}
	// Named consumers are separate.
	h.expect(http.StatusNoContent, "PUT", offsets, tok, map[string]any{"consumer_id": "reporting", "partition_id": 0, "offset": 1})
	h.expect(http.StatusOK, "GET", offsets+"?consumer_id=reporting", tok, nil).decode(t, &off)
	if off.StoredOffset != 1 {
		t.Fatalf("named consumer %+v", off)
	}

	h.expect(http.StatusNoContent, "DELETE", offsets+"/7?partition_id=0", tok, nil)
	h.expectError(http.StatusNotFound, 3021, "GET", offsets+"?consumer_id=7&partition_id=0", tok, nil)
	h.expectError(http.StatusNotFound, 3021, "DELETE", offsets+"/7?partition_id=0", tok, nil)
}

func TestSystemReads(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "s"})
	var stats statsJSON
	h.expect(http.StatusOK, "GET", "/stats", tok, nil).decode(t, &stats)
	if stats.StreamsCount != 1 || stats.ClientsCount < 1 || stats.IggyServerVersion == "" {
		t.Fatalf("stats %+v", stats)
	}
	var opts []optionDescriptorJSON
	h.expect(http.StatusOK, "GET", "/options/topic", tok, nil).decode(t, &opts)
	if len(opts) < 8 || opts[0].Key != "compression_algorithm" || opts[0].DefaultValue != "none" || opts[0].Kind != "string" {
		t.Fatalf("topic options %+v", opts)
	}
	h.expect(http.StatusOK, "GET", "/options/stream", tok, nil).decode(t, &opts)
	if len(opts) != 0 {
		t.Fatalf("stream options %+v", opts)
	}
	h.expectError(http.StatusBadRequest, 4, "GET", "/options/galaxy", tok, nil)
	var meta struct {
		Name  string            `json:"name"`
		Nodes []clusterNodeJSON `json:"nodes"`
	}
	h.expect(http.StatusOK, "GET", "/cluster/metadata", tok, nil).decode(t, &meta)
	if meta.Name != "single-node" || len(meta.Nodes) != 1 || meta.Nodes[0].Role != "leader" || meta.Nodes[0].Status != "healthy" {
		t.Fatalf("cluster metadata %+v", meta)
	}
	var me clientJSON
	h.expect(http.StatusOK, "GET", "/me", tok, nil).decode(t, &me)
	if me.Transport != "http" || me.UserID == nil || *me.UserID != 0 {
		t.Fatalf("me %+v", me)
	}
}

// TestConsumerGroups returns the broker's answer: while the broker lacks
// consumer groups every route reports FeatureUnavailable; once it has
// them, the group is created, read, listed and deleted.
func TestConsumerGroups(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "g"})
	h.expect(http.StatusOK, "POST", "/streams/g/topics", tok, map[string]any{"name": "t", "partitions_count": 3})
	const groups = "/streams/g/topics/t/consumer-groups"
	r := h.do("POST", groups, tok, map[string]any{"name": "workers"})
	if r.status == http.StatusBadRequest {
		if e := r.apiErr(t); e.ID != 5 || e.Code != "feature_unavailable" {
			t.Fatalf("create group error %+v", e)
		}
		h.expectError(http.StatusBadRequest, 5, "GET", groups, tok, nil)
		h.expectError(http.StatusBadRequest, 5, "GET", groups+"/workers", tok, nil)
		return
	}
	var g groupJSON
	if r.status != http.StatusOK {
		t.Fatalf("create group: %d %s", r.status, r.body)
	}
	r.decode(t, &g)
	if g.Name != "workers" || g.PartitionsCount != 3 || g.Members == nil {
		t.Fatalf("created group %+v", g)
	}
	var list []groupJSON
	h.expect(http.StatusOK, "GET", groups, tok, nil).decode(t, &list)
	if len(list) != 1 || list[0].Name != "workers" {
		t.Fatalf("groups %+v", list)
	}
	h.expect(http.StatusOK, "GET", groups+"/workers", tok, nil)
	h.expect(http.StatusNoContent, "DELETE", groups+"/workers", tok, nil)
	h.expectError(http.StatusNotFound, 5000, "GET", groups+"/workers", tok, nil)
}

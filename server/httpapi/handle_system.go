package httpapi

import (
	"net/http"
	"strings"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// statsJSON is Stats (§4.11.10) with its fields in snake_case.
type statsJSON struct {
	ProcessID           uint32             `json:"process_id"`
	CPUUsage            float32            `json:"cpu_usage"`
	TotalCPUUsage       float32            `json:"total_cpu_usage"`
	MemoryUsage         uint64             `json:"memory_usage"`
	TotalMemory         uint64             `json:"total_memory"`
	AvailableMemory     uint64             `json:"available_memory"`
	RunTime             uint64             `json:"run_time"`
	StartTime           uint64             `json:"start_time"`
	ReadBytes           uint64             `json:"read_bytes"`
	WrittenBytes        uint64             `json:"written_bytes"`
	MessagesSizeBytes   uint64             `json:"messages_size_bytes"`
	StreamsCount        uint32             `json:"streams_count"`
	TopicsCount         uint32             `json:"topics_count"`
	PartitionsCount     uint32             `json:"partitions_count"`
	SegmentsCount       uint32             `json:"segments_count"`
	MessagesCount       uint64             `json:"messages_count"`
	ClientsCount        uint32             `json:"clients_count"`
	ConsumerGroupsCount uint32             `json:"consumer_groups_count"`
	Hostname            string             `json:"hostname"`
	OSName              string             `json:"os_name"`
	OSVersion           string             `json:"os_version"`
	KernelVersion       string             `json:"kernel_version"`
	IggyServerVersion   string             `json:"iggy_server_version"`
	IggyServerSemver    *uint32            `json:"iggy_server_semver"`
	CacheMetrics        []cacheMetricsJSON `json:"cache_metrics"`
	ThreadsCount        uint32             `json:"threads_count"`
	FreeDiskSpace       uint64             `json:"free_disk_space"`
	TotalDiskSpace      uint64             `json:"total_disk_space"`
	// FencedPartitions is Strata's: the fenced partitions, absent when
	// none is (Iggy's SDKs ignore the key).
	FencedPartitions []fencedPartitionJSON `json:"fenced_partitions,omitempty"`
}

// fencedPartitionJSON is a fenced partition: it serves the offsets below
// served_below; file and position name the damage.
type fencedPartitionJSON struct {
	StreamID    uint32 `json:"stream_id"`
	TopicID     uint32 `json:"topic_id"`
	PartitionID uint32 `json:"partition_id"`
	ServedBelow uint64 `json:"served_below"`
	File        string `json:"file"`
	Position    uint64 `json:"position"`
	Reason      string `json:"reason"`
}

// cacheMetricsJSON is one cache-metrics entry of Stats.
type cacheMetricsJSON struct {
	StreamID    uint32  `json:"stream_id"`
	TopicID     uint32  `json:"topic_id"`
	PartitionID uint32  `json:"partition_id"`
	Hits        uint64  `json:"hits"`
	Misses      uint64  `json:"misses"`
	HitRatio    float32 `json:"hit_ratio"`
}

// getStats handles GET /stats.
func (a *api) getStats(w http.ResponseWriter, _ *http.Request, ls *server.LocalSession) error {
	var s wire.Stats
	if err := doDecode(ls, &wire.GetStatsRequest{}, &s); err != nil {
		return err
	}
	out := statsJSON{ProcessID: s.ProcessID, CPUUsage: s.CPUUsage, TotalCPUUsage: s.TotalCPUUsage,
		MemoryUsage: s.MemoryUsage, TotalMemory: s.TotalMemory, AvailableMemory: s.AvailableMemory,
		RunTime: s.RunTime, StartTime: s.StartTime, ReadBytes: s.ReadBytes, WrittenBytes: s.WrittenBytes,
		MessagesSizeBytes: s.MessagesSizeBytes, StreamsCount: s.StreamsCount, TopicsCount: s.TopicsCount,
		PartitionsCount: s.PartitionsCount, SegmentsCount: s.SegmentsCount, MessagesCount: s.MessagesCount,
		ClientsCount: s.ClientsCount, ConsumerGroupsCount: s.ConsumerGroupsCount, Hostname: s.Hostname,
		OSName: s.OSName, OSVersion: s.OSVersion, KernelVersion: s.KernelVersion,
		IggyServerVersion: s.ServerVersion, CacheMetrics: make([]cacheMetricsJSON, 0, len(s.CacheMetrics)),
		ThreadsCount: s.ThreadsCount, FreeDiskSpace: s.FreeDiskSpace, TotalDiskSpace: s.TotalDiskSpace}
	if s.ServerSemver != 0 {
		semver := s.ServerSemver
		out.IggyServerSemver = &semver
	}
	for _, c := range s.CacheMetrics {
		out.CacheMetrics = append(out.CacheMetrics, cacheMetricsJSON{StreamID: c.StreamID, TopicID: c.TopicID,
			PartitionID: c.PartitionID, Hits: c.Hits, Misses: c.Misses, HitRatio: c.HitRatio})
	}
	for _, f := range s.FencedPartitions {
		out.FencedPartitions = append(out.FencedPartitions, fencedPartitionJSON(f))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// optionScopes maps the {scope} path value to DescribeOptions scopes.
var optionScopes = map[string]wire.OptionScope{
	"topic": wire.OptionScopeTopic, "stream": wire.OptionScopeStream, "user": wire.OptionScopeUser,
}

// optionDescriptorJSON is one DescribeOptions entry.
type optionDescriptorJSON struct {
	Key          string `json:"key"`
	Kind         string `json:"kind"`
	DefaultValue string `json:"default_value"`
	Description  string `json:"description"`
}

// describeOptions handles GET /options/{scope}.
func (a *api) describeOptions(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	scope, ok := optionScopes[strings.ToLower(r.PathValue("scope"))]
	if !ok {
		return badRequest("scope", "scope must be topic, stream or user")
	}
	var reply wire.DescribeOptionsReply
	if err := doDecode(ls, &wire.DescribeOptionsRequest{Scope: scope}, &reply); err != nil {
		return err
	}
	out := make([]optionDescriptorJSON, 0, len(reply.Descriptors))
	for _, d := range reply.Descriptors {
		out = append(out, optionDescriptorJSON{Key: d.Key, Kind: tlvKindName(d.Kind),
			DefaultValue: optionText(wire.TLVItem{Kind: d.Kind, Data: d.Default}), Description: d.Description})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// clusterNodeJSON is one node of the cluster metadata.
type clusterNodeJSON struct {
	Name      string            `json:"name"`
	IP        string            `json:"ip"`
	Endpoints map[string]uint16 `json:"endpoints"`
	Role      string            `json:"role"`
	Status    string            `json:"status"`
}

// nodeStatusNames names node status codes (§4.11.11), index = code.
var nodeStatusNames = [...]string{"healthy", "starting", "stopping", "unreachable", "maintenance", "unknown"}

// getClusterMetadata handles GET /cluster/metadata.
func (a *api) getClusterMetadata(w http.ResponseWriter, _ *http.Request, ls *server.LocalSession) error {
	var meta wire.ClusterMetadata
	if err := doDecode(ls, &wire.GetClusterMetadataRequest{}, &meta); err != nil {
		return err
	}
	nodes := make([]clusterNodeJSON, 0, len(meta.Nodes))
	for _, n := range meta.Nodes {
		role := "follower"
		if n.Role == wire.NodeRoleLeader {
			role = "leader"
		}
		status := "unknown"
		if int(n.Status) < len(nodeStatusNames) {
			status = nodeStatusNames[n.Status]
		}
		nodes = append(nodes, clusterNodeJSON{Name: n.Name, IP: n.IP, Role: role, Status: status,
			Endpoints: map[string]uint16{"tcp": n.TCPPort, "quic": n.QUICPort, "http": n.HTTPPort, "websocket": n.WebSocketPort}})
	}
	writeJSON(w, http.StatusOK, struct {
		Name  string            `json:"name"`
		Nodes []clusterNodeJSON `json:"nodes"`
	}{Name: meta.Name, Nodes: nodes})
	return nil
}

// getClients handles GET /clients.
func (a *api) getClients(w http.ResponseWriter, _ *http.Request, ls *server.LocalSession) error {
	payload, err := ls.Do(&wire.GetClientsRequest{})
	if err != nil {
		return err
	}
	clients, err := wire.DecodeClients(payload)
	if err != nil {
		return err
	}
	out := make([]clientJSON, 0, len(clients))
	for i := range clients {
		out = append(out, clientFrom(&clients[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getClient handles GET /clients/{client_id}.
func (a *api) getClient(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	id, err := pathU32(r, "client_id")
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetClientRequest{ClientID: id})
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return fail(wire.ErrClientNotFound, "client_id", "client %d not found", id)
	}
	var details wire.ClientDetails
	if err := details.Decode(payload); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, clientDetailsFrom(&details))
	return nil
}

// getMe handles GET /me (the caller's own session, like GetMe).
func (a *api) getMe(w http.ResponseWriter, _ *http.Request, ls *server.LocalSession) error {
	var details wire.ClientDetails
	if err := doDecode(ls, &wire.GetMeRequest{}, &details); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, clientDetailsFrom(&details))
	return nil
}

// snapshotRequest is the body of POST /snapshot.
type snapshotRequest struct {
	Compression   string   `json:"compression"`
	SnapshotTypes []string `json:"snapshot_types"`
}

var snapshotCompressions = map[string]uint8{
	"": wire.SnapshotCompressionDeflated, "stored": wire.SnapshotCompressionStored,
	"deflated": wire.SnapshotCompressionDeflated, "bzip2": wire.SnapshotCompressionBzip2,
	"zstd": wire.SnapshotCompressionZstd, "lzma": wire.SnapshotCompressionLzma, "xz": wire.SnapshotCompressionXz,
}

var snapshotTypes = map[string]uint8{
	"filesystem_overview": wire.SnapshotFilesystemOverview, "process_list": wire.SnapshotProcessList,
	"resource_usage": wire.SnapshotResourceUsage, "test": wire.SnapshotTest,
	"server_logs": wire.SnapshotServerLogs, "server_config": wire.SnapshotServerConfig, "all": wire.SnapshotAll,
}

// snapshot handles POST /snapshot: the ZIP archive the broker builds, or
// its refusal as the error JSON.
func (a *api) snapshot(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	var body snapshotRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	compression, ok := snapshotCompressions[strings.ToLower(body.Compression)]
	if !ok {
		return badRequest("compression", "unknown compression %q", body.Compression)
	}
	req := wire.GetSnapshotRequest{Compression: compression}
	if len(body.SnapshotTypes) == 0 {
		req.Types = []uint8{wire.SnapshotAll}
	}
	for _, name := range body.SnapshotTypes {
		t, ok := snapshotTypes[strings.ToLower(name)]
		if !ok {
			return badRequest("snapshot_types", "unknown snapshot type %q", name)
		}
		req.Types = append(req.Types, t)
	}
	payload, err := ls.Do(&req)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="snapshot.zip"`)
	w.WriteHeader(http.StatusOK)
	// A failed write means the client went away.
	_, _ = w.Write(payload)
	return nil
}

// ping handles GET /ping.
func (a *api) ping(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	// A failed write means the client went away.
	_, _ = w.Write([]byte("pong"))
	return nil
}

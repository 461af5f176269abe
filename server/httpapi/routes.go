package httpapi

import "net/http"

// routes registers every route of PROTOCOL.md §11 on mux, plus GET /me and
// Iggy's flush route.
// /metrics is registered by New.
func (a *api) routes(mux *http.ServeMux) {
	const topic = "/streams/{stream_id}/topics/{topic_id}"

	// System.
	mux.HandleFunc("GET /ping", a.public(a.ping))
	mux.HandleFunc("GET /stats", a.authed(a.getStats))
	mux.HandleFunc("GET /options/{scope}", a.authed(a.describeOptions))
	mux.HandleFunc("GET /cluster/metadata", a.authed(a.getClusterMetadata))
	mux.HandleFunc("GET /clients", a.authed(a.getClients))
	mux.HandleFunc("GET /clients/{client_id}", a.authed(a.getClient))
	mux.HandleFunc("GET /me", a.authed(a.getMe))
	mux.HandleFunc("POST /snapshot", a.authed(a.snapshot))

	// Sessions and tokens.
	mux.HandleFunc("POST /users/login", a.public(a.login))
	mux.HandleFunc("POST /users/refresh-token", a.public(a.refreshToken))
	mux.HandleFunc("DELETE /users/logout", a.public(a.logout))
	mux.HandleFunc("POST /personal-access-tokens/login", a.public(a.loginWithPAT))
	mux.HandleFunc("GET /personal-access-tokens", a.authed(a.getPATs))
	mux.HandleFunc("POST /personal-access-tokens", a.authed(a.createPAT))
	mux.HandleFunc("DELETE /personal-access-tokens/{name}", a.authed(a.deletePAT))

	// Users.
	mux.HandleFunc("GET /users", a.authed(a.getUsers))
	mux.HandleFunc("POST /users", a.authed(a.createUser))
	mux.HandleFunc("GET /users/{user_id}", a.authed(a.getUser))
	mux.HandleFunc("PUT /users/{user_id}", a.authed(a.updateUser))
	mux.HandleFunc("DELETE /users/{user_id}", a.authed(a.deleteUser))
	mux.HandleFunc("PUT /users/{user_id}/password", a.authed(a.changePassword))
	mux.HandleFunc("PUT /users/{user_id}/permissions", a.authed(a.updatePermissions))

	// Streams.
	mux.HandleFunc("GET /streams", a.authed(a.getStreams))
	mux.HandleFunc("POST /streams", a.authed(a.createStream))
	mux.HandleFunc("GET /streams/{stream_id}", a.authed(a.getStream))
	mux.HandleFunc("PUT /streams/{stream_id}", a.authed(a.updateStream))
	mux.HandleFunc("DELETE /streams/{stream_id}", a.authed(a.deleteStream))
	mux.HandleFunc("DELETE /streams/{stream_id}/purge", a.authed(a.purgeStream))

	// Topics, partitions, segments.
	mux.HandleFunc("GET /streams/{stream_id}/topics", a.authed(a.getTopics))
	mux.HandleFunc("POST /streams/{stream_id}/topics", a.authed(a.createTopic))
	mux.HandleFunc("GET "+topic, a.authed(a.getTopic))
	mux.HandleFunc("PUT "+topic, a.authed(a.updateTopic))
	mux.HandleFunc("DELETE "+topic, a.authed(a.deleteTopic))
	mux.HandleFunc("DELETE "+topic+"/purge", a.authed(a.purgeTopic))
	mux.HandleFunc("POST "+topic+"/partitions", a.authed(a.createPartitions))
	mux.HandleFunc("DELETE "+topic+"/partitions", a.authed(a.deletePartitions))
	mux.HandleFunc("DELETE "+topic+"/partitions/{partition_id}", a.authed(a.deleteSegments))

	// Messages and offsets.
	mux.HandleFunc("GET "+topic+"/messages", a.authed(a.pollMessages))
	mux.HandleFunc("POST "+topic+"/messages", a.authed(a.sendMessages))
	mux.HandleFunc("GET "+topic+"/messages/flush/{partition_id}/{fsync}", a.authed(a.flushUnsavedBuffer))
	mux.HandleFunc("GET "+topic+"/consumer-offsets", a.authed(a.getConsumerOffset))
	mux.HandleFunc("PUT "+topic+"/consumer-offsets", a.authed(a.storeConsumerOffset))
	mux.HandleFunc("DELETE "+topic+"/consumer-offsets/{consumer_id}", a.authed(a.deleteConsumerOffset))

	// Consumer groups.
	mux.HandleFunc("GET "+topic+"/consumer-groups", a.authed(a.getConsumerGroups))
	mux.HandleFunc("POST "+topic+"/consumer-groups", a.authed(a.createConsumerGroup))
	mux.HandleFunc("GET "+topic+"/consumer-groups/{group_id}", a.authed(a.getConsumerGroup))
	mux.HandleFunc("DELETE "+topic+"/consumer-groups/{group_id}", a.authed(a.deleteConsumerGroup))
}

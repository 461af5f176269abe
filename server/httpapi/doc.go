// Package httpapi is Strata's HTTP REST API (PROTOCOL.md §11): Iggy's JSON
// routes on the [http] listener (default 127.0.0.1:3000), plus Prometheus
// metrics at /metrics.
//
// Every request runs through an in-process protocol session
// (server.LocalSession) logged in as the caller, so permissions, errors and
// metrics are those of the binary protocol. POST /users/login (or
// /personal-access-tokens/login) checks the credentials once and returns a
// JWT (HS256, one hour by default); the token stands for that session
// until it expires, is refreshed (POST /users/refresh-token: a new token,
// same session, the old token revoked) or logged out (DELETE
// /users/logout). Every route except /ping, /metrics and the login and
// refresh routes needs "Authorization: Bearer <token>". Failed logins are
// limited per (address, username), per username and per address (by
// default 5, 20 and 100 in a row, then one per 12 s; 429 with
// Retry-After), successful ones per (user, address) (100, then 10 a
// second); a user holds at most 100 sessions (a login past that ends the
// user's oldest) and a login into a gateway full of other users' sessions
// is refused (503) rather than displacing any ([login] in the server
// config). Passwords and tokens are never logged.
//
// Errors are Iggy's JSON: {"id": 1009, "code": "stream_id_not_found",
// "reason": "...", "field": "stream_id"}; 404 for not-found codes, 401 for
// missing, invalid or revoked tokens, 403 for Unauthorized (41), 503 with
// Retry-After for the transient codes 57 and 58, 413 for a body over
// 64 MiB, 400 otherwise (bad JSON is 400 InvalidFormat).
//
// Statuses on success follow Iggy's handlers: reads, logins and creates
// that return a record (stream, topic, user, token, group) answer 200 with
// JSON; sends and partition creation 201; updates, deletes, purges, offset
// writes and logout 204.
//
// Walkthrough with curl (start the server with STRATA_HTTP_ENABLED=true):
//
//	# log in (root credentials as configured) and keep the token
//	TOKEN=$(curl -s -X POST localhost:3000/users/login \
//	  -H 'Content-Type: application/json' \
//	  -d '{"username":"iggy","password":"iggy"}' | jq -r .access_token.token)
//	AUTH="Authorization: Bearer $TOKEN"
//
//	# create a stream and a topic with 2 partitions (persisted durability)
//	curl -s -X POST localhost:3000/streams -H "$AUTH" \
//	  -H 'Content-Type: application/json' -d '{"name":"orders"}'
//	curl -s -X POST localhost:3000/streams/orders/topics -H "$AUTH" \
//	  -H 'Content-Type: application/json' \
//	  -d '{"name":"events","partitions_count":2,"compression_algorithm":"none",
//	       "message_expiry":"7 days","max_topic_size":0,
//	       "options":{"durability":"persisted"}}'
//
//	# send two messages to partition 0 (payloads are base64)
//	curl -s -X POST localhost:3000/streams/orders/topics/events/messages \
//	  -H "$AUTH" -H 'Content-Type: application/json' \
//	  -d '{"partitioning":{"kind":"partition_id","value":0},
//	       "messages":[{"id":1,"payload":"aGVsbG8="},{"id":2,"payload":"d29ybGQ="}]}'
//
//	# poll them back from offset 0 as consumer 1, committing the offset
//	curl -s -H "$AUTH" 'localhost:3000/streams/orders/topics/events/messages?consumer_id=1&partition_id=0&kind=offset&value=0&count=10&auto_commit=true'
//
//	# the stored offset, the metrics, and logging out
//	curl -s -H "$AUTH" 'localhost:3000/streams/orders/topics/events/consumer-offsets?consumer_id=1&partition_id=0'
//	curl -s localhost:3000/metrics | grep strata_messages_appended_total
//	curl -s -X DELETE localhost:3000/users/logout -H "$AUTH"
//
// Shapes (snake_case). Where §11 only summarises, the names mirror the
// §4.11 record fields:
//   - stream: {id, created_at, name, size, messages_count, topics_count,
//     options} (+topics on details); topic: {id, created_at, name, size,
//     message_expiry (micros), compression_algorithm ("none"/"gzip"),
//     max_topic_size, messages_count, partitions_count, options: {key:
//     {value, explicit}}} (+partitions: {id, created_at, segments_count,
//     current_offset, size, messages_count, and on GET of one topic, for a
//     fenced partition only, fenced: {served_below, file, position,
//     reason}}).
//   - stats: Iggy's fields, plus fenced_partitions: [{stream_id, topic_id,
//     partition_id, served_below, file, position, reason}] when a
//     partition is fenced (README "Fenced partitions"). A poll of a fenced
//     partition at or past served_below answers 400 cannot_read_message
//     (4011), a send 400 cannot_append_message (4010).
//   - topic create/update: message_expiry and max_topic_size accept a number
//     (micros, bytes) or a string ("7 days", "1 GiB", "unlimited");
//     options is a string map of any topic key (§4.8), including the Strata
//     keys durability and consumer_offset_durability.
//   - polled message: {header: {checksum, id, offset, timestamp,
//     origin_timestamp, user_headers_length, payload_length, reserved},
//     payload (base64), user_headers}; user headers are a list of {key:
//     {kind, value}, value: {kind, value}} (kind a TLV name such as
//     "string" or "uint32", value base64 bytes), or the raw TLV block in
//     base64 when it does not parse. Sends accept either form.
//   - message id: a JSON number, a decimal string, or 32 hex digits
//     (a UUID); partitioning {kind: balanced | partition_id | messages_key,
//     value}: a partition id as a number (or 4 little-endian bytes in
//     base64), a key in base64.
//   - user: {id, created_at, status ("active"/"inactive"), username,
//     options} (+permissions: {global: {...}, streams: {"<id>": {...,
//     topics: {"<id>": {...}}}}}); PAT list [{name, expiry_at (micros or
//     null)}]; clients {client_id, user_id (null when not logged in),
//     address, transport ("tcp"/"quic"/"http"/"websocket"),
//     consumer_groups_count} (+consumer_groups); GET /me is the caller's
//     own client.
//
// Consumers over HTTP are individual consumers (consumer_id a number or a
// name); consumer-group routes return what the broker answers. The ack
// query of a send is accepted and both levels take the replicated path;
// ?consistency= is accepted and ignored.
package httpapi

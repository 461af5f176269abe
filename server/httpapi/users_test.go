package httpapi

import (
	"net/http"
	"testing"
)

func TestUsersAndPermissions(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	root := h.root()
	h.expect(http.StatusOK, "POST", "/streams", root, map[string]any{"name": "shared"})
	h.expect(http.StatusOK, "POST", "/streams/shared/topics", root, map[string]any{"name": "t", "partitions_count": 1})

	// A reader: global read_streams, plus send on stream 0 / topic 0.
	var alice userDetailsJSON
	h.expect(http.StatusOK, "POST", "/users", root, map[string]any{
		"username": "alice", "password": "alice-secret", "status": "active",
		"permissions": map[string]any{
			"global": map[string]bool{"read_streams": true},
			"streams": map[string]any{"0": map[string]any{
				"topics": map[string]any{"0": map[string]bool{"send_messages": true}},
			}},
		},
	}).decode(t, &alice)
	if alice.Username != "alice" || alice.Status != "active" || alice.Permissions == nil || !alice.Permissions.Global.ReadStreams ||
		!alice.Permissions.Streams["0"].Topics["0"].SendMessages {
		t.Fatalf("created user %+v", alice)
	}
	h.expectError(http.StatusBadRequest, 46, "POST", "/users", root, map[string]any{"username": "alice", "password": "x12"})
	h.expectError(http.StatusBadRequest, 45, "POST", "/users", root, map[string]any{"username": "bob", "password": "x12", "status": "sleepy"})

	var users []userJSON
	h.expect(http.StatusOK, "GET", "/users", root, nil).decode(t, &users)
	if len(users) != 2 || users[1].Username != "alice" || users[1].Status != "active" {
		t.Fatalf("users %+v", users)
	}
	var got userDetailsJSON
	h.expect(http.StatusOK, "GET", "/users/alice", root, nil).decode(t, &got)
	if got.ID != alice.ID || got.Permissions == nil {
		t.Fatalf("get user %+v", got)
	}
	h.expectError(http.StatusNotFound, 20, "GET", "/users/nobody", root, nil)

	tok := h.login("alice", "alice-secret").AccessToken.Token
	// Allowed: reading streams, sending to topic 0 of stream 0.
	h.expect(http.StatusOK, "GET", "/streams", tok, nil)
	h.expect(http.StatusCreated, "POST", "/streams/0/topics/0/messages", tok, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": 0}, "messages": []map[string]any{{"payload": "eA=="}},
	})
	// Denied with 403 / 41 and nothing changes.
	e := h.expectError(http.StatusForbidden, 41, "POST", "/streams", tok, map[string]any{"name": "mine"})
	if e.Code != "unauthorized" {
		t.Fatalf("denied error %+v", e)
	}
	h.expectError(http.StatusForbidden, 41, "DELETE", "/streams/shared", tok, nil)
	h.expectError(http.StatusForbidden, 41, "GET", "/users", tok, nil)
	h.expectError(http.StatusForbidden, 41, "PUT", "/users/alice/permissions", tok, map[string]any{
		"permissions": map[string]any{"global": map[string]bool{"manage_streams": true}},
	})
	// A user with no permissions can neither poll nor send.
	h.expect(http.StatusOK, "POST", "/users", root, map[string]any{"username": "bob", "password": "bob-secret"})
	bob := h.login("bob", "bob-secret").AccessToken.Token
	h.expectError(http.StatusForbidden, 41, "GET", "/streams/0/topics/0/messages?partition_id=0", bob, nil)
	h.expectError(http.StatusForbidden, 41, "POST", "/streams/0/topics/0/messages", bob, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": 0}, "messages": []map[string]any{{"payload": "eA=="}},
	})
	h.expectError(http.StatusForbidden, 41, "GET", "/stats", bob, nil)
	var streams []streamJSON
	h.expect(http.StatusOK, "GET", "/streams", root, nil).decode(t, &streams)
	if len(streams) != 1 || streams[0].Name != "shared" {
		t.Fatalf("a denied request changed the streams: %+v", streams)
	}
	var topic topicJSON
	h.expect(http.StatusOK, "GET", "/streams/0/topics/0", root, nil).decode(t, &topic)
	if topic.MessagesCount != 1 {
		t.Fatalf("topic holds %d messages, want alice's 1", topic.MessagesCount)
	}
	h.expect(http.StatusOK, "GET", "/users/alice", root, nil).decode(t, &got)
	if got.Permissions.Global.ManageStreams {
		t.Fatal("a denied permission update applied")
	}

	// Granting manage_streams (the session sees it at once).
	h.expect(http.StatusNoContent, "PUT", "/users/alice/permissions", root, map[string]any{
		"permissions": map[string]any{"global": map[string]bool{"manage_streams": true, "read_streams": true}},
	})
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "mine"})

	// Own password change needs no permission; the new one logs in.
	h.expectError(http.StatusBadRequest, 42, "PUT", "/users/alice/password", tok, map[string]string{
		"current_password": "wrong", "new_password": "alice-new"})
	h.expect(http.StatusNoContent, "PUT", "/users/alice/password", tok, map[string]string{
		"current_password": "alice-secret", "new_password": "alice-new"})
	h.login("alice", "alice-new")

	// Update and delete.
	h.expect(http.StatusNoContent, "PUT", "/users/alice", root, map[string]any{"username": "alicia", "status": "inactive"})
	h.expect(http.StatusOK, "GET", "/users/alicia", root, nil).decode(t, &got)
	if got.Status != "inactive" {
		t.Fatalf("updated user %+v", got)
	}
	h.expectError(http.StatusBadRequest, 48, "DELETE", "/users/0", root, nil)
	h.expect(http.StatusNoContent, "DELETE", "/users/alicia", root, nil)
	// The deleted user's session is gone and so is its token.
	h.expectError(http.StatusUnauthorized, 40, "GET", "/streams", tok, nil)
	h.expectError(http.StatusUnauthorized, 78, "GET", "/streams", tok, nil)
	h.expectError(http.StatusNotFound, 20, "DELETE", "/users/alicia", root, nil)
}

package metadata

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestBootstrapRootAndUserDetailsLayout(t *testing.T) {
	h := newHarness(t)
	root := h.m.User(NumericID(RootUserID))
	if root == nil || root.Username != "iggy" || root.PasswordHash != rootHash {
		t.Fatalf("root %+v", root)
	}
	perms := &Permissions{
		Global: GlobalPermissions{ReadUsers: true, PollMessages: true},
		Streams: []StreamPermissions{{StreamID: 3, ReadStream: true,
			Topics: []TopicPermissions{{TopicID: 1, SendMessages: true}}}},
	}
	payload := h.mustOK(&CreateUser{Username: "alice", PasswordHash: "x", Status: 7, Permissions: perms})
	r := reader{t: t, b: payload}
	if id, created, status := r.u32(), r.u64(), r.u8(); id != 1 || created != h.ts || status != UserStatusActive {
		t.Fatalf("user %d %d %d", id, created, status)
	}
	if name := r.name(); name != "alice" {
		t.Fatalf("name %q", name)
	}
	if opts := r.u32(); opts != 0 {
		t.Fatalf("options %d", opts)
	}
	if flag := r.u8(); flag != 1 {
		t.Fatalf("permissions flag %d", flag)
	}
	raw := r.bytes(int(r.u32()))
	r.done()
	// §4.10 by hand: 10 global bools, has_streams, stream entry, topic entry.
	want := []byte{0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1,
		3, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
		1, 0, 0, 0, 0, 0, 0, 1, 0,
		0}
	if !reflect.DeepEqual(raw, want) {
		t.Fatalf("permissions %v\nwant %v", raw, want)
	}
	got, err := DecodePermissions(raw)
	if err != nil || !reflect.DeepEqual(got, perms) {
		t.Fatalf("decode %+v %v", got, err)
	}
	// Without permissions, UserDetails ends with four zero bytes.
	payload = h.mustOK(&CreateUser{Username: "bob", PasswordHash: "x", Status: UserStatusInactive})
	if tail := payload[len(payload)-4:]; !reflect.DeepEqual(tail, []byte{0, 0, 0, 0}) {
		t.Fatalf("tail %v", tail)
	}
	if u := h.m.UserByName("bob"); u == nil || u.Status != UserStatusInactive || u.ID != 2 {
		t.Fatalf("bob %+v", u)
	}
}

func TestUserResultCodes(t *testing.T) {
	alice := &CreateUser{Username: "alice", PasswordHash: "ha", Status: UserStatusActive}
	cases := []struct {
		name  string
		setup []Op
		asNob bool
		op    Op
		want  Code
	}{
		{"create ok", nil, false, alice, CodeOK},
		{"create short name", nil, false, &CreateUser{Username: "ab", PasswordHash: "h"}, CodeInvalidUsername},
		{"create long name", nil, false, &CreateUser{Username: strings.Repeat("a", 51), PasswordHash: "h"}, CodeInvalidUsername},
		{"create 50 bytes", nil, false, &CreateUser{Username: strings.Repeat("a", 50), PasswordHash: "h"}, CodeOK},
		{"create exists", []Op{alice}, false, alice, CodeUserAlreadyExists},
		{"create root name exists", nil, false, &CreateUser{Username: "iggy", PasswordHash: "h"}, CodeUserAlreadyExists},
		{"create bad options", nil, false, &CreateUser{Username: "carol", PasswordHash: "h", Options: []byte{1}}, CodeInvalidOptionValue},
		{"create unauthorized", nil, true, alice, CodeUnauthorized},
		{"update missing", nil, false, &UpdateUser{User: NamedID("zed")}, CodeResourceNotFound},
		{"update short", []Op{alice}, false, &UpdateUser{User: NamedID("alice"), SetUsername: true, Username: "al"}, CodeInvalidUsername},
		{"update taken", []Op{alice}, false, &UpdateUser{User: NamedID("alice"), SetUsername: true, Username: "iggy"}, CodeUserAlreadyExists},
		{"update ok", []Op{alice}, false, &UpdateUser{User: NamedID("alice"), SetUsername: true, Username: "alicia"}, CodeOK},
		{"update unauthorized", []Op{alice}, true, &UpdateUser{User: NamedID("alice"), SetStatus: true, Status: 2}, CodeUnauthorized},
		{"delete missing", nil, false, &DeleteUser{User: NumericID(9)}, CodeResourceNotFound},
		{"delete root", nil, false, &DeleteUser{User: NumericID(0)}, CodeCannotDeleteUser},
		{"delete ok", []Op{alice}, false, &DeleteUser{User: NamedID("alice")}, CodeOK},
		{"delete unauthorized", []Op{alice}, true, &DeleteUser{User: NamedID("alice")}, CodeUnauthorized},
		{"permissions missing", nil, false, &UpdatePermissions{User: NumericID(5)}, CodeResourceNotFound},
		{"permissions root", nil, false, &UpdatePermissions{User: NumericID(0)}, CodeCannotChangePermissions},
		{"permissions ok", []Op{alice}, false, &UpdatePermissions{User: NamedID("alice"), Permissions: &Permissions{}}, CodeOK},
		{"permissions unauthorized", []Op{alice}, true, &UpdatePermissions{User: NamedID("alice")}, CodeUnauthorized},
		{"password missing", nil, false, &ChangePassword{User: NamedID("zed"), VerifiedHash: "h", NewPasswordHash: "n"}, CodeResourceNotFound},
		{"password ok", []Op{alice}, false, &ChangePassword{User: NamedID("alice"), VerifiedHash: "ha", NewPasswordHash: "n"}, CodeOK},
		{"password stale hash", []Op{alice}, false, &ChangePassword{User: NamedID("alice"), VerifiedHash: "old", NewPasswordHash: "n"}, CodeInvalidCredentials},
		{"password not verified", []Op{alice}, false, &ChangePassword{User: NamedID("alice"), NewPasswordHash: "n"}, CodeInvalidCredentials},
		{"password empty new", []Op{alice}, false, &ChangePassword{User: NamedID("alice"), VerifiedHash: "ha"}, CodeInvalidCredentials},
		{"password of other unauthorized", []Op{alice}, true, &ChangePassword{User: NamedID("alice"), VerifiedHash: "ha", NewPasswordHash: "n"}, CodeUnauthorized},
		{"password of self", nil, true, &ChangePassword{User: NamedID("nobody"), VerifiedHash: "h-nobody", NewPasswordHash: "n"}, CodeOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			nobody := h.addUser("nobody", nil)
			for _, o := range tc.setup {
				h.mustOK(o)
			}
			user := RootUserID
			if tc.asNob {
				user = nobody
			}
			if got := h.code(user, tc.op); got != tc.want {
				t.Fatalf("code %d, want %d", got, tc.want)
			}
		})
	}
}

func TestUserIDsReuseAndDeleteDropsTokens(t *testing.T) {
	h := newHarness(t)
	a := h.addUser("alice", nil)
	b := h.addUser("bobby", nil)
	if a != 1 || b != 2 {
		t.Fatalf("ids %d %d", a, b)
	}
	if got := h.code(a, &CreatePersonalAccessToken{Name: "ci", TokenHash: "hash-ci"}); got != CodeOK {
		t.Fatalf("token: %d", got)
	}
	h.mustOK(&DeleteUser{User: NumericID(a)})
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, []Effect{{Kind: EffectUserDeleted, UserID: a}}) {
		t.Fatalf("effects %+v", got)
	}
	if u, tok := h.m.TokenByHash("hash-ci"); u != nil || tok != nil {
		t.Fatal("token of deleted user still resolves")
	}
	if id := h.addUser("carol", nil); id != 1 {
		t.Fatalf("reused id %d", id)
	}
	var names []string
	for _, u := range h.m.Users() {
		names = append(names, u.Username)
	}
	if !reflect.DeepEqual(names, []string{"iggy", "carol", "bobby"}) {
		t.Fatalf("users %v", names)
	}
}

func TestUpdateUserStatus(t *testing.T) {
	h := newHarness(t)
	id := h.addUser("alice", nil)
	h.mustOK(&UpdateUser{User: NumericID(id), SetStatus: true, Status: UserStatusInactive})
	if h.m.User(NumericID(id)).Status != UserStatusInactive {
		t.Fatal("status not updated")
	}
	h.mustOK(&UpdateUser{User: NumericID(id), SetStatus: true, Status: 9})
	if h.m.User(NumericID(id)).Status != UserStatusInactive {
		t.Fatal("invalid status was not ignored")
	}
}

func TestPersonalAccessTokens(t *testing.T) {
	h := newHarness(t)
	user := h.addUser("alice", nil)
	reply := h.apply(user, &CreatePersonalAccessToken{Name: "ci", TokenHash: "h1", ExpiryMicros: 5_000})
	created := h.ts
	if code, _ := ReplyCode(reply); code != CodeOK {
		t.Fatalf("create: %d", code)
	}
	r := reader{t: t, b: reply[4:]}
	if name := r.name(); name != "ci" {
		t.Fatalf("payload name %q", name)
	}
	r.done()
	owner, tok := h.m.TokenByHash("h1")
	if owner == nil || owner.ID != user || tok.Name != "ci" || tok.ExpiryAt != created+5_000 {
		t.Fatalf("lookup %+v %+v", owner, tok)
	}
	cases := []struct {
		op   Op
		want Code
	}{
		{&CreatePersonalAccessToken{Name: "ci", TokenHash: "h2"}, CodePersonalAccessTokenExists},
		{&CreatePersonalAccessToken{Name: "other", TokenHash: "h1"}, CodePersonalAccessTokenExists},
		{&CreatePersonalAccessToken{Name: "never", TokenHash: "h3", ExpiryMicros: NeverExpires}, CodeOK},
		{&CreatePersonalAccessToken{Name: "zero", TokenHash: "h4", ExpiryMicros: 0}, CodeOK},
		{&CreatePersonalAccessToken{Name: "overflow", TokenHash: "h5", ExpiryMicros: NeverExpires - 1}, CodeInvalidTokenExpiry},
		{&DeletePersonalAccessToken{Name: "missing"}, CodeResourceNotFound},
		{&DeletePersonalAccessToken{Name: "ci"}, CodeOK},
		{&DeletePersonalAccessToken{Name: "ci"}, CodeResourceNotFound},
	}
	for i, tc := range cases {
		if got := h.code(user, tc.op); got != tc.want {
			t.Fatalf("case %d: code %d, want %d", i, got, tc.want)
		}
	}
	var names []string
	for _, tok := range h.m.Tokens(user) {
		names = append(names, tok.Name)
		if tok.ExpiryAt != 0 {
			t.Fatalf("token %s expiry %d, want never", tok.Name, tok.ExpiryAt)
		}
	}
	if !reflect.DeepEqual(names, []string{"never", "zero"}) {
		t.Fatalf("tokens %v", names)
	}
	// Tokens are per user: the root has none and another user may reuse a name.
	if h.m.Tokens(RootUserID) != nil {
		t.Fatal("root has tokens")
	}
	if got := h.code(RootUserID, &CreatePersonalAccessToken{Name: "never", TokenHash: "root-h"}); got != CodeOK {
		t.Fatalf("root token %d", got)
	}
	if got := h.code(77, &CreatePersonalAccessToken{Name: "x", TokenHash: "h77"}); got != CodeResourceNotFound {
		t.Fatalf("unknown user token %d", got)
	}
}

func TestPersonalAccessTokenLimit(t *testing.T) {
	h := newHarness(t)
	user := h.addUser("alice", nil)
	for i := 0; i < TokensPerUserMax; i++ {
		if got := h.code(user, &CreatePersonalAccessToken{Name: fmt.Sprint("t", i), TokenHash: fmt.Sprint("h", i)}); got != CodeOK {
			t.Fatalf("token %d: %d", i, got)
		}
	}
	if got := h.code(user, &CreatePersonalAccessToken{Name: "one-more", TokenHash: "hx"}); got != CodePersonalAccessTokensLimit {
		t.Fatalf("code %d", got)
	}
}

func TestReadPermissionHelpers(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NumericID(0), "t", 1))
	poller := h.addUser("poller", &Permissions{Streams: []StreamPermissions{{StreamID: 0,
		Topics: []TopicPermissions{{TopicID: 0, PollMessages: true}}}}})
	sender := h.addUser("sender", &Permissions{Global: GlobalPermissions{SendMessages: true}})
	reader := h.addUser("reader", &Permissions{Global: GlobalPermissions{ReadStreams: true, ReadServers: true}})
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"poller polls", h.m.CanPoll(poller, 0, 0), true},
		{"poller other topic", h.m.CanPoll(poller, 0, 1), false},
		{"poller sends", h.m.CanSend(poller, 0, 0), false},
		{"sender sends anywhere", h.m.CanSend(sender, 5, 5), true},
		{"sender polls", h.m.CanPoll(sender, 0, 0), false},
		{"reader reads stream", h.m.CanReadStream(reader, 0), true},
		{"reader reads streams", h.m.CanReadStreams(reader), true},
		{"reader reads topic", h.m.CanReadTopic(reader, 0, 0), true},
		{"reader polls", h.m.CanPoll(reader, 0, 0), true},
		{"reader sends", h.m.CanSend(reader, 0, 0), false},
		{"reader servers", h.m.CanReadServers(reader), true},
		{"reader users", h.m.CanReadUsers(reader), false},
		{"poller reads topics", h.m.CanReadTopics(poller, 0), false},
		{"root anything", h.m.CanSend(RootUserID, 9, 9) && h.m.CanReadUsers(RootUserID), true},
		{"unknown user", h.m.CanPoll(999, 0, 0), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, code := h.m.ResolveSend(sender, NamedID("s"), NamedID("t")); code != CodeOK {
		t.Fatalf("resolve send %d", code)
	}
	if _, code := h.m.ResolveSend(poller, NamedID("s"), NamedID("t")); code != CodeUnauthorized {
		t.Fatalf("resolve send unauthorized %d", code)
	}
	if _, code := h.m.ResolveSend(sender, NamedID("s"), NamedID("nope")); code != CodeResourceNotFound {
		t.Fatalf("resolve send missing %d", code)
	}
	if streams, topics, partitions := h.m.Counts(); streams != 1 || topics != 1 || partitions != 1 {
		t.Fatalf("counts %d %d %d", streams, topics, partitions)
	}
}

func TestDecodePermissionsLenient(t *testing.T) {
	// Non-zero bools are true; repeated stream ids keep the last entry;
	// entries come back sorted.
	raw := []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1,
		4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		9, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0}
	p, err := DecodePermissions(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := &Permissions{Global: GlobalPermissions{ManageServers: true},
		Streams: []StreamPermissions{{StreamID: 4}, {StreamID: 9, ReadStream: true}}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %+v", p)
	}
	for n := 0; n < len(raw); n++ {
		if _, err := DecodePermissions(raw[:n]); err == nil {
			t.Fatalf("prefix %d decoded", n)
		}
	}
}

package metadata

// Record encoders for the reply payloads Apply returns, following the
// layouts of PROTOCOL.md §4.11 byte for byte. The server may use them for
// its read replies too, passing the counters that live in the partitions.

// AppendStream appends a Stream record (§4.11.1) of s with the given
// counters. Streams carry no options, so the block is empty.
func AppendStream(dst []byte, s *Stream, sizeBytes, messagesCount uint64) []byte {
	dst = appendU32(dst, s.ID)
	dst = appendU64(dst, s.CreatedAt)
	dst = appendU32(dst, uint32(len(s.topics)))
	dst = appendU64(dst, sizeBytes)
	dst = appendU64(dst, messagesCount)
	dst = appendName(dst, s.Name)
	return appendU32(dst, 0)
}

// AppendTopicHeader appends a TopicHeader record (§4.11.2) of t with the
// given counters.
func AppendTopicHeader(dst []byte, t *Topic, sizeBytes, messagesCount uint64) []byte {
	dst = appendU32(dst, t.ID)
	dst = appendU64(dst, t.CreatedAt)
	dst = appendU32(dst, uint32(len(t.Partitions)))
	dst = appendU64(dst, t.Options.MessageExpiryMicros)
	dst = appendU8(dst, t.Options.CompressionAlgorithm)
	dst = appendU64(dst, t.Options.MaxTopicSizeBytes)
	dst = appendU64(dst, sizeBytes)
	dst = appendU64(dst, messagesCount)
	dst = appendName(dst, t.Name)
	dst = appendBlob(dst, t.ExplicitOptions)
	return appendBlob(dst, t.DerivedOptions)
}

// AppendPartition appends a Partition record (§4.11.3).
func AppendPartition(dst []byte, p Partition, segmentsCount uint32, currentOffset, sizeBytes, messagesCount uint64) []byte {
	dst = appendU32(dst, p.ID)
	dst = appendU64(dst, p.CreatedAt)
	dst = appendU32(dst, segmentsCount)
	dst = appendU64(dst, currentOffset)
	dst = appendU64(dst, sizeBytes)
	return appendU64(dst, messagesCount)
}

// AppendUser appends a User record (§4.11.4).
func AppendUser(dst []byte, u *User) []byte {
	dst = appendU32(dst, u.ID)
	dst = appendU64(dst, u.CreatedAt)
	dst = appendU8(dst, u.Status)
	dst = appendName(dst, u.Username)
	return appendBlob(dst, u.Options)
}

// AppendUserDetails appends a UserDetails record (§4.11.5): the User, then
// [1][perm_len u32][permissions], or four zero bytes without permissions.
func AppendUserDetails(dst []byte, u *User) []byte {
	dst = AppendUser(dst, u)
	if u.Permissions == nil {
		return appendU32(dst, 0)
	}
	dst = appendU8(dst, 1)
	return appendBlob(dst, u.Permissions.Encode(nil))
}

// AppendToken appends a PersonalAccessToken list entry (§4.11.6).
func AppendToken(dst []byte, t *Token) []byte {
	dst = appendName(dst, t.Name)
	return appendU64(dst, t.ExpiryAt)
}

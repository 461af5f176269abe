package wire

// Protocol and server versions (PROTOCOL.md §2.3).
const (
	// ServerVersion is the version string Strata reports (Register reply,
	// Stats), the reference server's crate version.
	ServerVersion = "0.9.0-edge.5"
	// ServerSemver is ServerVersion as Stats encodes it:
	// major·10⁶ + minor·10³ + patch.
	ServerSemver uint32 = 9000
	// ProtocolVersion is the packed protocol version 0.11.0 = 11264,
	// bytes 00 2C 00 00.
	ProtocolVersion uint32 = 0<<20 | 11<<10 | 0
	// ProtocolVersionMin is the lowest accepted client version: the server
	// version with its patch zeroed.
	ProtocolVersionMin = ProtocolVersion &^ versionFieldMask
	// ProtocolVersionMax is the highest accepted version; only its major and
	// minor matter (the patch is ignored on the upper side).
	ProtocolVersionMax = ProtocolVersion

	versionFieldBits = 10
	versionFieldMask = 1<<versionFieldBits - 1
)

// PackVersion packs major.minor.patch as major<<20 | minor<<10 | patch.
// Each part is truncated to 10 bits.
func PackVersion(major, minor, patch uint32) uint32 {
	return (major&versionFieldMask)<<(2*versionFieldBits) |
		(minor&versionFieldMask)<<versionFieldBits |
		patch&versionFieldMask
}

// UnpackVersion splits a packed version into major, minor and patch.
func UnpackVersion(v uint32) (major, minor, patch uint32) {
	return v >> (2 * versionFieldBits) & versionFieldMask,
		v >> versionFieldBits & versionFieldMask,
		v & versionFieldMask
}

// AcceptsProtocolVersion reports whether a client announcing the packed
// version v may log in: v ≥ min and v>>10 ≤ max>>10 (any 0.11.x).
func AcceptsProtocolVersion(v uint32) bool {
	return v >= ProtocolVersionMin && v>>versionFieldBits <= ProtocolVersionMax>>versionFieldBits
}

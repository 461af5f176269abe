package group

// SendDigest exposes sendDigest to the external tests.
var SendDigest = sendDigest

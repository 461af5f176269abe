package httpapi

import (
	"net"
	"net/http"
)

// clientAddress is the address the limiter keys on: the peer IP of the
// connection (forwarding headers are not trusted).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Package httpapi is Strata's HTTP REST API (PROTOCOL.md §11).
package httpapi

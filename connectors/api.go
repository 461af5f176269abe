package connectors

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// apiReadHeaderTimeout bounds a client's request header.
const apiReadHeaderTimeout = 10 * time.Second

// Handler is the HTTP control API:
//
//	GET  /health                      {"status":"healthy"}
//	GET  /sources, /sinks             connectors with status and counters
//	GET  /sources/{key}, /sinks/{key} one connector, config included
//	POST /sources/{key}/restart       restart (also /sinks/{key}/restart)
//	GET  /stats                       JSON totals and per-connector counters
//	GET  /metrics                     Prometheus text
func (r *Runtime) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	})
	for _, kind := range []string{KindSource, KindSink} {
		plural := "/" + kind + "s"
		mux.HandleFunc("GET "+plural, func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, r.Connectors(kind))
		})
		mux.HandleFunc("GET "+plural+"/{key}", func(w http.ResponseWriter, req *http.Request) {
			info, err := r.Connector(kind, req.PathValue("key"))
			if err != nil {
				writeError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, info)
		})
		mux.HandleFunc("POST "+plural+"/{key}/restart", func(w http.ResponseWriter, req *http.Request) {
			err := r.Restart(kind, req.PathValue("key"))
			if errors.Is(err, errRestartBusy) {
				writeJSON(w, http.StatusAccepted, map[string]string{"status": "restart already in progress"})
				return
			}
			if err != nil {
				writeError(w, err)
				return
			}
			info, _ := r.Connector(kind, req.PathValue("key"))
			writeJSON(w, http.StatusOK, info)
		})
	}
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, r.Stats())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(r.metrics.Registry, promhttp.HandlerOpts{}))
	return mux
}

// Stats is the /stats payload.
type Stats struct {
	SourcesTotal   int             `json:"sources_total"`
	SourcesRunning int             `json:"sources_running"`
	SinksTotal     int             `json:"sinks_total"`
	SinksRunning   int             `json:"sinks_running"`
	Connectors     []ConnectorInfo `json:"connectors"`
}

// Stats summarizes every connector.
func (r *Runtime) Stats() Stats {
	s := Stats{Connectors: r.Connectors("")}
	for _, c := range s.Connectors {
		running := 0
		if c.Status == StatusRunning {
			running = 1
		}
		if c.Type == KindSource {
			s.SourcesTotal++
			s.SourcesRunning += running
		} else {
			s.SinksTotal++
			s.SinksRunning += running
		}
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if errors.Is(err, ErrNotFound) {
		status = http.StatusNotFound
	}
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// startHTTP listens on the configured address and serves Handler.
func (r *Runtime) startHTTP() error {
	ln, err := net.Listen("tcp", r.cfg.HTTP.Address)
	if err != nil {
		return fmt.Errorf("%w: http.address %s: %w", ErrConfig, r.cfg.HTTP.Address, err)
	}
	r.httpLn = ln
	r.httpSrv = &http.Server{Handler: r.Handler(), ReadHeaderTimeout: apiReadHeaderTimeout}
	go func() {
		if err := r.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("http api stopped", zap.Error(err))
		}
	}()
	r.log.Info("http api listening", zap.String("address", ln.Addr().String()))
	return nil
}

// HTTPAddr is the API's bound address (nil when disabled or not started).
func (r *Runtime) HTTPAddr() net.Addr {
	if r.httpLn == nil {
		return nil
	}
	return r.httpLn.Addr()
}

package simulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/klog/v2"
)

// NodeList is GET /nodes's answer: the names and indices of the nodes
// that run, in index order.
type NodeList struct {
	Nodes []NodeEntry `json:"nodes"`
}

// NodeEntry is one running node.
type NodeEntry struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// Handler serves the running Sim's control API (berth simulate
// --control-address): GET /nodes lists the nodes that run, POST
// /nodes/{index} starts node index, DELETE /nodes/{index} stops it and
// deletes its Node and Lease. Errors come back as text: 404 for a node
// that does not run, 409 for one that runs already, 400 for a bad index.
// It authenticates nobody: serve it on loopback. Run serves it on
// Config.ControlAddress.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nodes", func(w http.ResponseWriter, r *http.Request) {
		ids, err := s.Running(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		list := NodeList{Nodes: []NodeEntry{}}
		for _, i := range ids {
			list.Nodes = append(list.Nodes, NodeEntry{Index: i, Name: s.Name(i)})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("POST /nodes/{index}", func(w http.ResponseWriter, r *http.Request) {
		s.control(w, r, true)
	})
	mux.HandleFunc("DELETE /nodes/{index}", func(w http.ResponseWriter, r *http.Request) {
		s.control(w, r, false)
	})
	return mux
}

// control adds or removes the node the request's path names.
func (s *Sim) control(w http.ResponseWriter, r *http.Request, add bool) {
	i, err := strconv.Atoi(r.PathValue("index"))
	if err != nil || i < 0 {
		http.Error(w, fmt.Sprintf("node index %q: want a number of 0 or more", r.PathValue("index")), http.StatusBadRequest)
		return
	}
	if add {
		err = s.Add(r.Context(), i)
	} else {
		err = s.Remove(r.Context(), i)
	}
	switch {
	case errors.Is(err, ErrRuns):
		http.Error(w, err.Error(), http.StatusConflict)
	case errors.Is(err, ErrNotRunning):
		http.Error(w, err.Error(), http.StatusNotFound)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(NodeEntry{Index: i, Name: s.Name(i)})
	}
}

// serveControl listens on ControlAddress and serves Handler until ctx
// ends or stop is called; stop returns once the server has shut down.
func (s *Sim) serveControl(ctx context.Context) (stop func(), err error) {
	l, err := net.Listen("tcp", s.cfg.ControlAddress)
	if err != nil {
		return nil, fmt.Errorf("simulate: control address: %w", err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Simulate control API stopped")
		}
	}()
	klog.FromContext(ctx).Info("Serving the simulate control API", "address", l.Addr().String())
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		<-done
	}, nil
}

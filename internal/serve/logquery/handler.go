package logquery

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Bounds of one query.
const (
	// DefaultTimeout is upstream's deadline of a journal query.
	DefaultTimeout = 30 * time.Second
	// MaxOutputBytes caps what one query writes (before compression).
	MaxOutputBytes = 64 << 20
	// maxUnitsBytes caps the list of the journal's units.
	maxUnitsBytes = 4 << 20
)

// Config is what Handler needs.
type Config struct {
	// Dir is the node's log directory (/var/log): file queries and the
	// file heuristics stay under it.
	Dir string
	// Files serves a plain /logs/<file> request under Dir.
	Files http.Handler
	// Journalctl is the journalctl binary; empty means "journalctl" on
	// PATH.
	Journalctl string
	// Timeout bounds a journal query; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps a query's output; zero means MaxOutputBytes.
	MaxOutputBytes int64
}

// Handler returns the /logs/ handler in query mode, as upstream's with
// enableSystemLogQuery: a request with query parameters is a node log
// query, one without is Files'.
func Handler(cfg Config) http.Handler {
	if cfg.Journalctl == "" {
		cfg.Journalctl = "journalctl"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = MaxOutputBytes
	}
	return http.HandlerFunc(cfg.serve)
}

func (cfg Config) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q, errs := Parse(r.URL.Query())
	if len(errs) > 0 {
		http.Error(w, errs.ToAggregate().Error(), http.StatusBadRequest)
		return
	}
	if q == nil {
		cfg.Files.ServeHTTP(w, r)
		return
	}
	if p := strings.TrimPrefix(r.URL.Path, "/logs"); p != "/" && p != "" {
		http.Error(w, "path not allowed in query mode", http.StatusNotAcceptable)
		return
	}
	root, err := os.OpenRoot(cfg.Dir)
	if err != nil {
		http.Error(w, "open log directory: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer root.Close()
	if errs := Validate(q, root.Stat); len(errs) > 0 {
		http.Error(w, errs.ToAggregate().Error(), http.StatusNotAcceptable)
		return
	}
	if len(q.Services) > 0 {
		cfg.serveServices(w, r, q, root)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/logs" + path.Clean("/"+filepath.ToSlash(q.Files[0]))
	r2.URL.RawQuery = ""
	cfg.Files.ServeHTTP(w, r2)
}

// serveServices writes the services' logs, as upstream's journalServer:
// gzip when asked for, journald's units through journalctl, the others
// from their files, everything within the deadline and the output cap.
func (cfg Config) serveServices(w http.ResponseWriter, r *http.Request, q *Query, root *os.Root) {
	ctx, cancel := context.WithTimeout(r.Context(), cfg.Timeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
	var out io.Writer = w
	if r.Header.Get("Accept-Encoding") == "gzip" {
		w.Header().Set("Content-Encoding", "gzip")
		gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level
		defer gz.Close()
		out = gz
	}
	lim := &cappedWriter{w: out, left: cfg.MaxOutputBytes, full: cancel}
	var native, files []string
	for _, s := range q.Services {
		if cfg.logsToJournal(ctx, s) {
			native = append(native, s)
		} else {
			files = append(files, s)
		}
	}
	if len(native) > 0 {
		cfg.copyJournal(ctx, lim, q, native)
	}
	switch {
	case len(files) > 0 && q.Options != (Options{}):
		fmt.Fprintf(lim, "\noptions present and query resolved to log files for %v\ntry without specifying options\n", files)
	case len(files) > 0:
		for _, s := range files {
			copyServiceFile(ctx, lim, root, s)
		}
	}
	if lim.truncated {
		fmt.Fprintf(out, "\noutput truncated at %d bytes\n", cfg.MaxOutputBytes)
	}
}

// logsToJournal says whether the journal has entries of the service's
// unit (upstream's checkForNativeLogger).
func (cfg Config) logsToJournal(ctx context.Context, service string) bool {
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, cfg.Journalctl, unitsArgs()...)
	lim := &cappedWriter{w: &buf, left: maxUnitsBytes}
	cmd.Stdout, cmd.Stderr = lim, lim
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil && !lim.truncated {
		return false
	}
	return strings.Contains(buf.String(), service+".service")
}

// copyJournal runs journalctl for the services into w; a journalctl that
// could not run leaves a line, as upstream.
func (cfg Config) copyJournal(ctx context.Context, w *cappedWriter, q *Query, services []string) {
	cmd := exec.CommandContext(ctx, cfg.Journalctl, JournalArgs(q, services)...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err == nil || errors.As(err, &exitErr) || w.truncated {
		return
	}
	if q.Boot == nil || *q.Boot == 0 {
		fmt.Fprintf(w, "\nerror: journal output not available\n")
	}
}

// copyServiceFile writes the first of <service>, <service>.log and
// <service>/<service>.log under root (upstream's heuristicsCopyFileLogs).
func copyServiceFile(ctx context.Context, w io.Writer, root *os.Root, service string) {
	var err error
	for _, name := range []string{service, service + ".log", service + "/" + service + ".log"} {
		if err = copyFile(ctx, w, root, name); !errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(w, "\nlog not found for %s\n", service)
	case err != nil && !errors.Is(err, errOutputFull):
		fmt.Fprintf(w, "\nerror getting log for %s: %v\n", service, err)
	}
}

func copyFile(ctx context.Context, w io.Writer, root *os.Root, name string) error {
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.IsDir() {
		return os.ErrNotExist // the heuristics' /var/log/<service>/ directory
	}
	_, err = io.Copy(w, ctxReader{ctx: ctx, r: f})
	return err
}

// ctxReader stops reading once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

var errOutputFull = errors.New("output cap reached")

// cappedWriter passes on at most left bytes, then fails every write (which
// ends a command writing into it) and calls full once.
type cappedWriter struct {
	w         io.Writer
	left      int64
	truncated bool
	full      func()
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if c.truncated {
		return 0, errOutputFull
	}
	if int64(len(p)) <= c.left {
		n, err := c.w.Write(p)
		c.left -= int64(n)
		return n, err
	}
	n, err := c.w.Write(p[:c.left])
	c.left -= int64(n)
	c.truncated = true
	if c.full != nil {
		c.full()
	}
	if err == nil {
		err = errOutputFull
	}
	return n, err
}

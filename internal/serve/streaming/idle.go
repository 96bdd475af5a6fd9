package streaming

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// idleWriter lets the proxy hijack the client connection wrapped in an
// idleConn, closed after timeout without traffic either way. Only Hijack
// is used: the handlers proxy upgrade requests only.
type idleWriter struct {
	http.ResponseWriter
	ctx     context.Context
	clock   clock.Clock
	timeout time.Duration
}

func (w *idleWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("hijack connection: not supported")
	}
	conn, rw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	ic := &idleConn{Conn: conn, clock: w.clock}
	ic.touch()
	go ic.watch(w.ctx, w.timeout)
	return ic, rw, nil
}

// idleConn records when data last went through it. Its watch goroutine is
// the only closer for idleness; last is shared, hence atomic.
type idleConn struct {
	net.Conn
	clock clock.Clock
	last  atomic.Int64 // unix nanoseconds of the last read or write
}

func (c *idleConn) touch() { c.last.Store(c.clock.Now().UnixNano()) }

func (c *idleConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

// watch closes the connection once it has been idle for timeout, or
// returns when ctx ends (the proxy is done with the connection).
func (c *idleConn) watch(ctx context.Context, timeout time.Duration) {
	for {
		idle := c.clock.Since(time.Unix(0, c.last.Load()))
		if idle >= timeout {
			_ = c.Conn.Close()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(timeout - idle):
		}
	}
}

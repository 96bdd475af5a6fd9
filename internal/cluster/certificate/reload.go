package certificate

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ReloadPeriod is how often a Reloader reads its files again.
//
// Polling, not inotify: these are a few kilobytes, and a comparison of the
// bytes sees every way a file is replaced (rename over it, a Secret
// volume's ..data symlink swap, a bind mount's source changing) where
// inotify watches need care for each. Upstream's dynamiccertificates
// (k8s.io/apiserver, not a dependency of berth) watches and also re-reads
// every minute.
const ReloadPeriod = 5 * time.Second

// maxPEMFile caps how much of one file a Reloader reads.
const maxPEMFile = 1 << 20

// Reloader holds what one or more files parse to and reads them again
// every ReloadPeriod: when their bytes change and parse, Current returns
// the new value; when they do not parse, the old value stays and the
// error is logged. Current is safe for concurrent use; Run is called
// once, and only Run's goroutine touches last after the constructor.
type Reloader[T any] struct {
	name  string
	files []string
	parse func(data [][]byte) (*T, error)
	clock clock.WithTicker
	cur   atomic.Pointer[T]
	last  [][]byte
}

// NewKeyPairReloader loads tlsCertFile and tlsPrivateKeyFile; an error
// when they are not a pair.
func NewKeyPairReloader(certFile, keyFile string, clk clock.WithTicker) (*Reloader[tls.Certificate], error) {
	return newReloader("serving certificate", []string{certFile, keyFile}, clk, func(data [][]byte) (*tls.Certificate, error) {
		c, err := tls.X509KeyPair(data[0], data[1])
		if err != nil {
			return nil, err
		}
		return &c, nil
	})
}

// NewCAReloader loads a CA bundle (clientCAFile); an error when it holds
// no certificate.
func NewCAReloader(file string, clk clock.WithTicker) (*Reloader[x509.CertPool], error) {
	return newReloader("client CA bundle", []string{file}, clk, func(data [][]byte) (*x509.CertPool, error) {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data[0]) {
			return nil, fmt.Errorf("no PEM certificate")
		}
		return pool, nil
	})
}

func newReloader[T any](name string, files []string, clk clock.WithTicker, parse func([][]byte) (*T, error)) (*Reloader[T], error) {
	r := &Reloader[T]{name: name, files: files, parse: parse, clock: clk}
	if _, err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

// Current is the value the files last parsed to.
func (r *Reloader[T]) Current() *T { return r.cur.Load() }

// Run reads the files every ReloadPeriod until ctx ends.
func (r *Reloader[T]) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("files", r.files)
	t := r.clock.NewTicker(ReloadPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		changed, err := r.load()
		switch {
		case err != nil:
			logger.Error(err, "Keeping the previous "+r.name)
		case changed:
			logger.Info("Reloaded the " + r.name)
		}
	}
}

// load reads the files and, when they changed, parses and publishes them.
func (r *Reloader[T]) load() (changed bool, err error) {
	data := make([][]byte, len(r.files))
	for i, f := range r.files {
		if data[i], err = readCapped(f); err != nil {
			return false, fmt.Errorf("read %s %q: %w", r.name, f, err)
		}
	}
	if r.last != nil && equalAll(data, r.last) {
		return false, nil
	}
	v, err := r.parse(data)
	if err != nil {
		return false, fmt.Errorf("load %s %q: %w", r.name, r.files[0], err)
	}
	r.last = data
	r.cur.Store(v)
	return true, nil
}

// readCapped reads a file of at most maxPEMFile bytes.
func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPEMFile {
		return nil, fmt.Errorf("larger than %d bytes", maxPEMFile)
	}
	return data, nil
}

func equalAll(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

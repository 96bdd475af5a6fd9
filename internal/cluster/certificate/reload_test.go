package certificate

import (
	"bytes"
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestKeyPairReloader replaces the files under a running reloader: a good
// pair is picked up, a broken one leaves the previous in place, and the
// first load must succeed.
func TestKeyPairReloader(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(p pair) {
		writeFile(t, certFile, p.cert)
		writeFile(t, keyFile, p.key)
	}
	clk := clocktesting.NewFakeClock(testNow)
	if _, err := NewKeyPairReloader(certFile, keyFile, clk); err == nil {
		t.Fatal("no error without the files")
	}
	first := newPair(t, "first", testNow, testNow.Add(time.Hour))
	write(first)
	r, err := NewKeyPairReloader(certFile, keyFile, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	tick := func() {
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		clk.Step(ReloadPeriod)
	}
	waitFor := func(what string, p pair) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !bytes.Equal(r.Current().Certificate[0], tlsPair(t, p).Certificate[0]) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the reloader does not serve the expected certificate", what)
			}
			tick()
		}
	}
	waitFor("start", first)

	second := newPair(t, "second", testNow, testNow.Add(time.Hour))
	write(second)
	waitFor("replaced", second)

	// A certificate with another pair's key does not load: keep second.
	writeFile(t, certFile, newPair(t, "third", testNow, testNow.Add(time.Hour)).cert)
	for range 3 {
		tick()
	}
	waitFor("broken replacement", second)

	// Renamed over, as tools and Secret volumes do.
	fourth := newPair(t, "fourth", testNow, testNow.Add(time.Hour))
	writeFile(t, certFile+".new", fourth.cert)
	writeFile(t, keyFile+".new", fourth.key)
	for _, f := range []string{certFile, keyFile} {
		if err := os.Rename(f+".new", f); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("renamed over", fourth)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

func TestCAReloader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ca.crt")
	clk := clocktesting.NewFakeClock(testNow)
	writeFile(t, path, []byte("no certificate here"))
	if _, err := NewCAReloader(path, clk); err == nil {
		t.Error("no error for a bundle without a certificate")
	}
	writeFile(t, path, bytes.Repeat([]byte("A"), maxPEMFile+1))
	if _, err := NewCAReloader(path, clk); err == nil {
		t.Error("no error for a file over the cap")
	}
	ca := newPair(t, "ca-1", testNow, testNow.Add(time.Hour))
	writeFile(t, path, ca.cert)
	r, err := NewCAReloader(path, clk)
	if err != nil {
		t.Fatal(err)
	}
	want := x509.NewCertPool()
	want.AddCert(tlsPair(t, ca).Leaf)
	if !r.Current().Equal(want) {
		t.Error("pool does not hold the bundle's certificate")
	}
	ca2 := newPair(t, "ca-2", testNow, testNow.Add(time.Hour))
	writeFile(t, path, append(ca.cert, ca2.cert...))
	if changed, err := r.load(); !changed || err != nil {
		t.Fatalf("load after a change: %v, %v", changed, err)
	}
	want.AddCert(tlsPair(t, ca2).Leaf)
	if !r.Current().Equal(want) {
		t.Error("pool does not hold both certificates after the reload")
	}
	if changed, _ := r.load(); changed {
		t.Error("an unchanged file counts as a change")
	}
}

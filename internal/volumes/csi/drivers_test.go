package csi

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

func TestDrivers(t *testing.T) {
	var d Drivers
	v1, v2 := utilversion.MustParseGeneric("1.0.0"), utilversion.MustParseGeneric("1.2.0")
	if _, ok := d.Get("a"); ok {
		t.Fatal("the zero Drivers has a driver")
	}
	if err := d.add("RegisterPlugin", "b", Driver{Endpoint: "/b.sock", Version: v1}); err != nil {
		t.Fatal(err)
	}
	if err := d.add("RegisterPlugin", "a", Driver{Endpoint: "/a.sock", Version: v1}); err != nil {
		t.Fatal(err)
	}
	if err := d.add("RegisterPlugin", "a", Driver{Endpoint: "/a2.sock", Version: v1}); err == nil {
		t.Error("a driver of the same name and version was added")
	}
	if err := d.add("RegisterPlugin", "a", Driver{Endpoint: "/a2.sock", Version: v2}); err != nil {
		t.Errorf("a driver of the same name and a higher version: %v", err)
	}
	if got, _ := d.Get("a"); got != "/a2.sock" {
		t.Errorf("Get(a) = %q, want the newer /a2.sock", got)
	}
	if diff := cmp.Diff([]string{"a", "b"}, d.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if d.remove("a", "/a.sock") {
		t.Error("removed a driver by an endpoint it no longer has")
	}
	if !d.remove("a", "/a2.sock") {
		t.Error("did not remove a driver by its endpoint")
	}
	if diff := cmp.Diff([]string{"b"}, d.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// Of plugins of one name registering at once with one version, one wins.
func TestDriversAddIsOneStep(t *testing.T) {
	var d Drivers
	v := utilversion.MustParseGeneric("1.0.0")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 20 {
		wg.Go(func() {
			if d.add("RegisterPlugin", "a", Driver{Endpoint: fmt.Sprintf("/%d.sock", i), Version: v}) == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d registrations won, want 1", wins)
	}
}

func TestDriversDial(t *testing.T) {
	var d Drivers
	_, err := d.Dial("missing.example.com")
	const want = "driver name missing.example.com not found in the list of registered CSI drivers"
	if err == nil || err.Error() != want {
		t.Errorf("Dial of an unknown driver = %v, want %q", err, want)
	}
	if _, err := d.Dial(""); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("Dial of no name = %v, want an error", err)
	}
	drv, endpoint := startDriver(t, csifake.Config{NodeID: "n1"})
	if err := d.add("RegisterPlugin", testDriver, Driver{Endpoint: endpoint, Version: utilversion.MustParseGeneric("1.0.0")}); err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial(testDriver)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if info, err := c.NodeGetInfo(testContext(t)); err != nil || info.NodeID != "n1" {
		t.Errorf("NodeGetInfo through Dial = %+v, %v", info, err)
	}
	if diff := cmp.Diff([]string{"NodeGetInfo"}, drv.Methods()); diff != "" {
		t.Errorf("driver calls (-want +got):\n%s", diff)
	}
}

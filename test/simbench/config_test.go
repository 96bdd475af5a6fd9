package simbench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("100, 500,1000")
	if err != nil || !cmp.Equal(got, []int{100, 500, 1000}) {
		t.Errorf("ParseSizes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "10,x", "-5"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q): no error", bad)
		}
	}
}

func TestParseSimulators(t *testing.T) {
	got, err := ParseSimulators("kubemark,berth,kubemark")
	if err != nil || !cmp.Equal(got, []string{Berth, Kubemark}) {
		t.Errorf("ParseSimulators = %v, %v; want the table's order, once each", got, err)
	}
	if _, err := ParseSimulators("berth,kind"); err == nil {
		t.Error("ParseSimulators(kind): no error")
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Sizes: []int{5}, Simulators: []string{Berth}, PodsPerNode: 10, Window: time.Minute,
		ReadyTimeout: time.Minute, RunningTimeout: time.Minute, BerthBinary: "b", BinDir: "d", WorkDir: "w"}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"no sizes":      func(c *Config) { c.Sizes = nil },
		"no simulators": func(c *Config) { c.Simulators = nil },
		"no pods":       func(c *Config) { c.PodsPerNode = 0 },
		"short window":  func(c *Config) { c.Window = time.Second },
		"no timeout":    func(c *Config) { c.ReadyTimeout = 0 },
		"no work dir":   func(c *Config) { c.WorkDir = "" },
	} {
		c := ok
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

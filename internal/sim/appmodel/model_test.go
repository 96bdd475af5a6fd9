package appmodel

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        Behaviour
		wantErr     []string // substrings of the error
	}{
		{name: "none: the defaults", want: Behaviour{}},
		{name: "every key", annotations: map[string]string{
			Prefix + KeyReadyAfter: "10s", Prefix + KeyStartedAfter: "2s", Prefix + KeyLivenessFailAfter: "1m",
			Prefix + KeyRunFor: "30s", Prefix + KeyExitCode: "3", Prefix + KeyMemory: "64Mi", Prefix + KeyMemoryPerMinute: "1Mi",
			"other.io/x": "y",
		}, want: Behaviour{ReadyAfter: 10 * time.Second, StartedAfter: 2 * time.Second, LivenessFailAfter: time.Minute,
			RunFor: 30 * time.Second, ExitCode: 3, Memory: 64 << 20, MemoryPerMinute: 1 << 20}},
		{name: "the container's key wins", annotations: map[string]string{
			Prefix + KeyRunFor: "30s", Prefix + KeyRunFor + ".web": "5s", Prefix + KeyExitCode + ".other": "9",
		}, want: Behaviour{RunFor: 5 * time.Second}},
		{name: "bad values stay default, good ones apply", annotations: map[string]string{
			Prefix + KeyReadyAfter: "soon", Prefix + KeyExitCode: "x", Prefix + KeyMemory: "lots", Prefix + KeyRunFor: "-1s",
			Prefix + KeyMemoryPerMinute: "2Mi",
		}, want: Behaviour{MemoryPerMinute: 2 << 20}, wantErr: []string{
			`sim.berth.dev/ready-after "soon"`, `sim.berth.dev/exit-code "x"`, `sim.berth.dev/memory "lots"`, `sim.berth.dev/run-for "-1s": negative`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.annotations, "web")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
			if (err != nil) != (len(tt.wantErr) > 0) {
				t.Fatalf("error %v; want one with %q", err, tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	b := Behaviour{ReadyAfter: 10 * time.Second, StartedAfter: 5 * time.Second, LivenessFailAfter: 30 * time.Second}
	tests := []struct {
		name  string
		b     Behaviour
		probe Probe
		age   time.Duration
		want  bool
	}{
		{"default: ready at once", Behaviour{}, Readiness, 0, true},
		{"default: live for ever", Behaviour{}, Liveness, 100 * time.Hour, true},
		{"default: started at once", Behaviour{}, Startup, 0, true},
		{"not ready yet", b, Readiness, 9 * time.Second, false},
		{"ready at ready-after", b, Readiness, 10 * time.Second, true},
		{"not started yet", b, Startup, 4 * time.Second, false},
		{"started", b, Startup, 5 * time.Second, true},
		{"live before the failure", b, Liveness, 29 * time.Second, true},
		{"unhealthy from the failure on", b, Liveness, 30 * time.Second, false},
		{"still unhealthy later", b, Liveness, time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, out := tt.b.Answer(tt.probe, tt.age)
			if ok != tt.want {
				t.Errorf("Answer(%v, %s) = %v (%q); want %v", tt.probe, tt.age, ok, out, tt.want)
			}
			if !ok && out == "" {
				t.Error("a failure says nothing")
			}
		})
	}
}

func TestExit(t *testing.T) {
	tests := []struct {
		name     string
		b        Behaviour
		age      time.Duration
		exited   bool
		wantCode int32
	}{
		{"default: never", Behaviour{}, 1000 * time.Hour, false, 0},
		{"before run-for", Behaviour{RunFor: time.Minute, ExitCode: 2}, 59 * time.Second, false, 0},
		{"at run-for, its code", Behaviour{RunFor: time.Minute, ExitCode: 2}, time.Minute, true, 2},
		{"completes with 0", Behaviour{RunFor: time.Second}, 2 * time.Second, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exited, code := tt.b.Exit(tt.age)
			if exited != tt.exited || code != tt.wantCode {
				t.Errorf("Exit(%s) = %v, %d; want %v, %d", tt.age, exited, code, tt.exited, tt.wantCode)
			}
		})
	}
}

func TestMemoryAt(t *testing.T) {
	b := Behaviour{Memory: 100, MemoryPerMinute: 60}
	tests := []struct {
		age  time.Duration
		want uint64
	}{{0, 100}, {-time.Second, 100}, {30 * time.Second, 130}, {2 * time.Minute, 220}}
	for _, tt := range tests {
		if got := b.MemoryAt(tt.age); got != tt.want {
			t.Errorf("MemoryAt(%s) = %d; want %d", tt.age, got, tt.want)
		}
	}
	if got := (Behaviour{}).MemoryAt(time.Hour); got != 0 {
		t.Errorf("default MemoryAt = %d; want 0", got)
	}
}

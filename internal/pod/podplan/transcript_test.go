package podplan

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the actual output")

// TestTranscripts replays testdata/*.txt. Each block is a command line, a
// "----" line and the expected output, ended by a blank line; lines
// starting with # are comments. Commands (times are offsets from t0):
//
//	pod policy=Always init=a,b containers=web,log   new pod, empty runtime
//	    sidecars=a                                   restartable init containers
//	    startup=a                                    containers with a startup probe
//	    restart-all=a:42                             RestartAllContainers on exit 42
//	                                                 (restartPolicy Never unless a sidecar)
//	sync <time>                                      Compute, print, apply
//	exit <name> code=<n> at=<time>                   latest instance exits
//	sandbox-dies at=<time>                           sandbox and containers stop
//	liveness <name> fail|ok                          set a probe verdict
//	started <name>                                   latest instance passed its startup probe
//	image <name> <image>                             change a container's image
//	runtime                                          print the runtime state
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := runTranscript(t, string(data))
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(data), got); diff != "" {
				t.Errorf("transcript mismatch (-want +got), rerun with -update if intended:\n%s", diff)
			}
		})
	}
}

// runTranscript executes every command and returns the file rewritten with
// the actual outputs.
func runTranscript(t *testing.T, data string) string {
	var out strings.Builder
	var s sim
	lines := strings.Split(strings.TrimRight(data, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("line %d: command %q not followed by ----", i+1, line)
		}
		i++
		for i+1 < len(lines) && lines[i+1] != "" {
			i++ // skip the recorded output
		}
		out.WriteString(line + "\n----\n")
		if res := s.do(t, line); res != "" {
			out.WriteString(res + "\n")
		}
	}
	return out.String()
}

// sim is a toy runtime that applies Actions the way the executor would.
type sim struct {
	in  Inputs
	rt  runtimestate.Pod
	seq map[string]int
}

func (s *sim) do(t *testing.T, line string) string {
	f := strings.Fields(line)
	args := map[string]string{}
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			args[k] = v
		}
	}
	dur := func(v string) time.Duration {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return d
	}
	switch f[0] {
	case "pod":
		split := func(v string) []string {
			if v == "" {
				return nil
			}
			return strings.Split(v, ",")
		}
		s.in = Inputs{Pod: newPod(corev1.RestartPolicy(args["policy"]), split(args["init"]), split(args["containers"]))}
		always := corev1.ContainerRestartPolicyAlways
		for _, n := range split(args["sidecars"]) {
			specOf(s.in.Pod, n).RestartPolicy = &always
		}
		for _, n := range split(args["startup"]) {
			specOf(s.in.Pod, n).StartupProbe = &corev1.Probe{}
		}
		for _, r := range split(args["restart-all"]) {
			name, code, _ := strings.Cut(r, ":")
			n, err := strconv.Atoi(code)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			c := specOf(s.in.Pod, name)
			if c.RestartPolicy == nil {
				never := corev1.ContainerRestartPolicyNever
				c.RestartPolicy = &never
			}
			c.RestartPolicyRules = restartAllOn(int32(n))
		}
		s.rt = runtimestate.Pod{UID: testUID}
		s.seq = map[string]int{}
		return ""
	case "sync":
		return s.sync(at(dur(f[1])))
	case "exit":
		code, err := strconv.Atoi(args["code"])
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		c := s.rt.LatestContainer(f[1])
		if c == nil {
			t.Fatalf("%q: no container", line)
		}
		c.State, c.ExitCode, c.FinishedAt = runtimestate.ContainerExited, int32(code), at(dur(args["at"]))
		return ""
	case "sandbox-dies":
		s.stopAll(at(dur(args["at"])))
		return ""
	case "liveness":
		if s.in.Probes.LivenessFailed == nil {
			s.in.Probes.LivenessFailed = map[string]bool{}
		}
		c := s.rt.LatestContainer(f[1])
		if c == nil {
			t.Fatalf("%q: no container", line)
		}
		s.in.Probes.LivenessFailed[c.ID] = f[2] == "fail"
		return ""
	case "started":
		if s.in.Probes.Started == nil {
			s.in.Probes.Started = map[string]bool{}
		}
		c := s.rt.LatestContainer(f[1])
		if c == nil {
			t.Fatalf("%q: no container", line)
		}
		s.in.Probes.Started[c.ID] = true
		return ""
	case "image":
		specOf(s.in.Pod, f[1]).Image = f[2]
		return ""
	case "runtime":
		return s.dump()
	}
	t.Fatalf("unknown command %q", line)
	return ""
}

// sync runs Compute, applies its Actions and describes them. The next
// sync's RestartingAll is what the status generator reports from the plan
// (AllContainersRestarting True while resetting).
func (s *sim) sync(now time.Time) string {
	s.in.Now = now
	rt := s.rt
	rt.Containers = slices.Clone(s.rt.Containers)
	s.in.Runtime = &rt
	a := Compute(s.in)
	desc := describe(a, s.in.Pod)
	s.in.RestartingAll = a.RestartAll == RestartAllResetting
	for _, r := range a.Reset {
		s.rt.Containers = slices.DeleteFunc(s.rt.Containers, func(c runtimestate.Container) bool { return c.ID == r.ID })
	}

	if a.KillPod {
		s.stopAll(now)
	}
	for ref := range a.KillContainers {
		for i := range s.rt.Containers {
			if c := &s.rt.Containers[i]; c.ID == ref.ID {
				c.State, c.ExitCode, c.FinishedAt = runtimestate.ContainerExited, 137, now
			}
		}
	}
	sandboxID := a.SandboxID
	if a.CreateSandbox {
		sandboxID = fmt.Sprintf("sb-%d", a.Attempt)
		sb := readySandbox(sandboxID, a.Attempt)
		s.rt.Sandboxes = append([]runtimestate.Sandbox{sb}, s.rt.Sandboxes...)
	}
	for _, idx := range a.InitContainers {
		s.start(&s.in.Pod.Spec.InitContainers[idx], sandboxID, now)
	}
	for _, idx := range a.StartContainers {
		s.start(&s.in.Pod.Spec.Containers[idx], sandboxID, now)
	}
	s.in.Backoff = a.Backoff
	return desc
}

func (s *sim) start(spec *corev1.Container, sandboxID string, now time.Time) {
	s.seq[spec.Name]++
	c := runtimestate.Container{
		ID: fmt.Sprintf("%s-%d", spec.Name, s.seq[spec.Name]), Name: spec.Name, SandboxID: sandboxID,
		State: runtimestate.ContainerRunning, Hash: HashContainer(spec), Image: spec.Image,
		CreatedAt: now, StartedAt: now,
	}
	s.rt.Containers = append([]runtimestate.Container{c}, s.rt.Containers...)
}

func (s *sim) stopAll(now time.Time) {
	for i := range s.rt.Containers {
		if c := &s.rt.Containers[i]; c.State != runtimestate.ContainerExited {
			c.State, c.ExitCode, c.FinishedAt = runtimestate.ContainerExited, 137, now
		}
	}
	for i := range s.rt.Sandboxes {
		s.rt.Sandboxes[i].State = runtimestate.SandboxNotReady
	}
}

func (s *sim) dump() string {
	var b []string
	for _, sb := range s.rt.Sandboxes {
		b = append(b, fmt.Sprintf("sandbox %s %s", sb.ID, sb.State))
	}
	for _, c := range s.rt.Containers {
		line := fmt.Sprintf("container %s in %s %s", c.ID, c.SandboxID, c.State)
		if c.State == runtimestate.ContainerExited {
			line += fmt.Sprintf(" code=%d at=%s", c.ExitCode, c.FinishedAt.Sub(t0))
		}
		b = append(b, line)
	}
	return strings.Join(b, "\n")
}

// describe prints Actions one fact per line, in a stable order.
func describe(a Actions, pod *corev1.Pod) string {
	var b []string
	if a.RestartAll != RestartAllNone {
		b = append(b, "restart-all "+a.RestartAll.String())
	}
	for _, r := range a.Reset {
		line := "reset " + r.ID
		if r.Kill {
			line += " kill"
		}
		b = append(b, line)
	}
	if a.KillPod {
		b = append(b, "kill-pod")
	}
	refs := make([]ContainerRef, 0, len(a.KillContainers))
	for ref := range a.KillContainers {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(x, y ContainerRef) int { return strings.Compare(x.ID, y.ID) })
	for _, ref := range refs {
		r := a.KillContainers[ref]
		b = append(b, fmt.Sprintf("kill %s %s: %s", ref.ID, r.Reason, r.Message))
	}
	if a.CreateSandbox {
		b = append(b, fmt.Sprintf("create-sandbox attempt=%d", a.Attempt))
	}
	if a.SandboxID != "" {
		b = append(b, "in-sandbox "+a.SandboxID)
	}
	for _, idx := range a.InitContainers {
		b = append(b, "start-init "+pod.Spec.InitContainers[idx].Name)
	}
	for _, idx := range a.StartContainers {
		b = append(b, "start "+pod.Spec.Containers[idx].Name)
	}
	for _, name := range sortedKeys(a.Waiting) {
		w := a.Waiting[name]
		b = append(b, fmt.Sprintf("waiting %s %s: %s", name, w.Reason, w.Message))
	}
	for _, name := range sortedKeys(a.Backoff) {
		e := a.Backoff[name]
		b = append(b, fmt.Sprintf("backoff %s delay=%s updated=%s", name, e.Delay, e.LastUpdate.Sub(t0)))
	}
	if len(b) == 0 {
		return "nothing"
	}
	return strings.Join(b, "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

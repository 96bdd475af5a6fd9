package cpumanager

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"
)

// container returns a container requesting and limited to cpu and 1Gi.
func container(name, request, limit string) corev1.Container {
	c := corev1.Container{Name: name}
	if request != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(request), corev1.ResourceMemory: resource.MustParse("1Gi")}
	}
	if limit != "" {
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit), corev1.ResourceMemory: resource.MustParse("1Gi")}
	}
	return c
}

func pod(uid string, init []corev1.Container, containers ...corev1.Container) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: init, Containers: containers}}
	p.UID = types.UID(uid)
	p.Name, p.Namespace = "p-"+uid, "default"
	return p
}

func sidecar(c corev1.Container) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func TestNewStaticReserves(t *testing.T) {
	tests := []struct {
		name     string
		topo     *Topology
		num      int
		explicit string
		want     string
		wantErr  bool
	}{
		{name: "lowest core first", topo: topoDualSocketHT, num: 2, want: "0,6"},
		{name: "one of single socket", topo: topoSingleSocketHT, num: 1, want: "0"},
		{name: "reservedSystemCPUs", topo: topoDualSocketHT, num: 2, explicit: "1,3", want: "1,3"},
		{name: "reservedSystemCPUs of another size", topo: topoDualSocketHT, num: 3, explicit: "1,3", wantErr: true},
		{name: "more than the machine", topo: topoSingleSocketHT, num: 9, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewStatic(tt.topo, tt.num, mustParse(t, tt.explicit), Options{})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("NewStatic reserved %s, want an error", p.Reserved())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := mustParse(t, tt.want); !p.Reserved().Equals(want) {
				t.Errorf("reserved = %s, want %s", p.Reserved(), want)
			}
		})
	}
}

func TestStaticStart(t *testing.T) {
	tests := []struct {
		name        string
		opts        Options
		state       State
		wantDefault string
		wantErr     string
	}{
		{name: "new state: every CPU shared", wantDefault: "0-7"},
		{name: "new state, strict: reserved kept out", opts: Options{StrictCPUReservation: true}, wantDefault: "1-7"},
		{name: "restored", state: State{Default: mustParse(t, "0-3,5-7"), Assignments: map[string]map[string]cpuset.CPUSet{"p": {"c": cpuset.New(4)}}}, wantDefault: "0-3,5-7"},
		{name: "assignments without a default", state: State{Assignments: map[string]map[string]cpuset.CPUSet{"p": {"c": cpuset.New(4)}}},
			wantErr: "default cpuset cannot be empty"},
		{name: "reserved CPU given out", state: State{Default: mustParse(t, "1-7"), Assignments: map[string]map[string]cpuset.CPUSet{"p": {"c": cpuset.New(0)}}},
			wantErr: `not all reserved cpus: "0" are present in defaultCpuSet: "1-7"`},
		{name: "strict, reserved CPU shared", opts: Options{StrictCPUReservation: true}, state: State{Default: mustParse(t, "0-7")},
			wantErr: `some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-7"`},
		{name: "overlap", state: State{Default: mustParse(t, "0-7"), Assignments: map[string]map[string]cpuset.CPUSet{"p": {"c": cpuset.New(4)}}},
			wantErr: `pod: p, container: c cpuset: "4" overlaps with default cpuset "0-7"`},
		{name: "CPUs changed", state: State{Default: mustParse(t, "0-9")},
			wantErr: `current set of available CPUs "0-7" doesn't match with CPUs in state "0-9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewStatic(topoSingleSocketHT, 1, cpuset.New(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Start(tt.state)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Start error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := mustParse(t, tt.wantDefault); !got.Default.Equals(want) {
				t.Errorf("Start default = %s, want %s", got.Default, want)
			}
		})
	}
}

// TestStaticAllocatePod holds cases modelled on upstream's
// TestStaticPolicyAdd and TestStaticPolicyReuseCPUs.
func TestStaticAllocatePod(t *testing.T) {
	tests := []struct {
		name        string
		topo        *Topology
		opts        Options
		reserved    int
		assigned    map[string]map[string]cpuset.CPUSet
		def         string
		pod         *corev1.Pod
		want        map[string]string // container -> CPUs
		wantDefault string
		wantErr     error
	}{
		{name: "Guaranteed single core, SingleSocketHT: the lone thread of core 0", topo: topoSingleSocketHT, reserved: 1, def: "0-7",
			pod: pod("u", nil, container("c", "1", "1")), want: map[string]string{"c": "4"}, wantDefault: "0-3,5-7"},
		{name: "Guaranteed 2 CPUs: a whole core", topo: topoSingleSocketHT, reserved: 1, def: "0-7",
			pod: pod("u", nil, container("c", "2", "2")), want: map[string]string{"c": "1,5"}, wantDefault: "0,2-4,6,7"},
		{name: "Guaranteed 6 CPUs of DualSocketHT: a socket", topo: topoDualSocketHT, reserved: 1, def: "0-11",
			pod: pod("u", nil, container("c", "6", "6")), want: map[string]string{"c": "1,3,5,7,9,11"}, wantDefault: "0,2,4,6,8,10"},
		{name: "non-integer CPUs: shared pool", topo: topoSingleSocketHT, reserved: 1, def: "0-7",
			pod: pod("u", nil, container("c", "1500m", "1500m")), want: map[string]string{}, wantDefault: "0-7"},
		{name: "Burstable: shared pool", topo: topoSingleSocketHT, reserved: 1, def: "0-7",
			pod: pod("u", nil, container("c", "1", "2")), want: map[string]string{}, wantDefault: "0-7"},
		{name: "already assigned: kept", topo: topoSingleSocketHT, reserved: 1, def: "0-2,4-7",
			assigned: map[string]map[string]cpuset.CPUSet{"u": {"c": cpuset.New(3)}},
			pod:      pod("u", nil, container("c", "1", "1")), want: map[string]string{"c": "3"}, wantDefault: "0-2,4-7"},
		{name: "not enough CPUs", topo: topoSingleSocketHT, reserved: 1, def: "0-7",
			pod: pod("u", nil, container("c", "8", "8")), wantErr: errors.New("not enough cpus available to satisfy request: requested=8, available=7")},
		{name: "full-pcpus-only, odd request", topo: topoSingleSocketHT, opts: Options{FullPhysicalCPUsOnly: true}, reserved: 1, def: "0-7",
			pod: pod("u", nil, container("c", "1", "1")), wantErr: SMTAlignmentError{RequestedCPUs: 1, CpusPerCore: 2}},
		{name: "full-pcpus-only, the reserved core's sibling is not free", topo: topoSingleSocketHT, opts: Options{FullPhysicalCPUsOnly: true}, reserved: 1, def: "0-7",
			pod: pod("u", nil, container("c", "8", "8")), wantErr: SMTAlignmentError{RequestedCPUs: 8, CpusPerCore: 2, AvailablePhysicalCPUs: 6, CausedByPhysicalCPUs: true}},
		{name: "init container's CPUs reused", topo: topoSingleSocketHT, reserved: 1, def: "0-7",
			pod:  pod("u", []corev1.Container{container("init", "2", "2")}, container("c", "2", "2")),
			want: map[string]string{"init": "1,5", "c": "1,5"}, wantDefault: "0,2-4,6,7"},
		{name: "sidecar's CPUs not reused", topo: topoSingleSocketHT, reserved: 1, def: "0-7",
			pod:  pod("u", []corev1.Container{sidecar(container("side", "2", "2"))}, container("c", "2", "2")),
			want: map[string]string{"side": "1,5", "c": "2,6"}, wantDefault: "0,3,4,7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewStatic(tt.topo, tt.reserved, cpuset.New(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			in := State{Default: mustParse(t, tt.def), Assignments: tt.assigned}
			got, err := p.AllocatePod(in, tt.pod)
			if tt.wantErr != nil {
				if err == nil || err.Error() != tt.wantErr.Error() {
					t.Fatalf("AllocatePod error = %v, want %v", err, tt.wantErr)
				}
				if !got.Default.Equals(in.Default) {
					t.Errorf("a failed AllocatePod changed the shared pool to %s", got.Default)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotCPUs := map[string]string{}
			for name, cs := range got.Assignments[string(tt.pod.UID)] {
				gotCPUs[name] = cs.String()
			}
			want := map[string]string{}
			for name, s := range tt.want {
				want[name] = mustParse(t, s).String()
			}
			if d := cmp.Diff(want, gotCPUs); d != "" {
				t.Errorf("assignments (-want +got):\n%s", d)
			}
			if w := mustParse(t, tt.wantDefault); !got.Default.Equals(w) {
				t.Errorf("shared pool = %s, want %s", got.Default, w)
			}
		})
	}
}

func TestStaticRemove(t *testing.T) {
	p, err := NewStatic(topoSingleSocketHT, 1, cpuset.New(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := State{Default: mustParse(t, "0,3,4,7"), Assignments: map[string]map[string]cpuset.CPUSet{"u": {"init": cpuset.New(1, 5), "c": cpuset.New(1, 5), "d": cpuset.New(2, 6)}}}
	s1 := p.Remove(s, "u", "init")
	if !s1.Default.Equals(s.Default) {
		t.Errorf("removing init released CPUs its sibling holds: shared %s", s1.Default)
	}
	s2 := p.Remove(s1, "u", "d")
	if want := mustParse(t, "0,2-4,6,7"); !s2.Default.Equals(want) {
		t.Errorf("shared pool after removing d = %s, want %s", s2.Default, want)
	}
	s3 := p.Remove(p.Remove(s2, "u", "c"), "u", "gone")
	if want := mustParse(t, "0-7"); !s3.Default.Equals(want) || len(s3.Assignments) != 0 {
		t.Errorf("after removing all: %+v", s3)
	}
	if len(s.Assignments["u"]) != 3 {
		t.Errorf("Remove changed its input")
	}
}

func TestAdmitReason(t *testing.T) {
	r, m := AdmitReason(SMTAlignmentError{RequestedCPUs: 1, CpusPerCore: 2})
	if r != "SMTAlignmentError" || m != "SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2" {
		t.Errorf("AdmitReason(SMT) = %q, %q", r, m)
	}
	r, m = AdmitReason(errors.New("not enough cpus"))
	if r != "UnexpectedAdmissionError" || m != "Allocate failed due to not enough cpus, which is unexpected" {
		t.Errorf("AdmitReason(other) = %q, %q", r, m)
	}
}

package nodestatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	before = metav1.NewTime(t0.Add(-time.Hour))
	now    = metav1.NewTime(t0)
)

func cond(typ corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string, heartbeat, transition metav1.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: heartbeat, LastTransitionTime: transition}
}

func TestPressureConditions(t *testing.T) {
	const (
		memOK  = "kubelet has sufficient memory available"
		memBad = "kubelet has insufficient memory available"
	)
	tests := []struct {
		name   string
		set    Setter
		under  func(*Inputs)
		prev   []corev1.NodeCondition
		want   []corev1.NodeCondition
		events []string
	}{
		{
			name:   "new memory condition starts from Unknown: a transition",
			set:    MemoryPressureCondition,
			want:   []corev1.NodeCondition{cond("MemoryPressure", "False", "KubeletHasSufficientMemory", memOK, now, now)},
			events: []string{"NodeHasSufficientMemory"},
		},
		{
			name: "unchanged: only the heartbeat moves",
			set:  MemoryPressureCondition,
			prev: []corev1.NodeCondition{cond("MemoryPressure", "False", "KubeletHasSufficientMemory", memOK, before, before)},
			want: []corev1.NodeCondition{cond("MemoryPressure", "False", "KubeletHasSufficientMemory", memOK, now, before)},
		},
		{
			name:   "memory pressure begins",
			set:    MemoryPressureCondition,
			under:  func(in *Inputs) { in.Pressure.Memory = true },
			prev:   []corev1.NodeCondition{cond("MemoryPressure", "False", "KubeletHasSufficientMemory", memOK, before, before)},
			want:   []corev1.NodeCondition{cond("MemoryPressure", "True", "KubeletHasInsufficientMemory", memBad, now, now)},
			events: []string{"NodeHasInsufficientMemory"},
		},
		{
			name:   "disk: new",
			set:    DiskPressureCondition,
			want:   []corev1.NodeCondition{cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now, now)},
			events: []string{"NodeHasNoDiskPressure"},
		},
		{
			name:   "disk: pressure",
			set:    DiskPressureCondition,
			under:  func(in *Inputs) { in.Pressure.Disk = true },
			prev:   []corev1.NodeCondition{cond("Ready", "True", "KubeletReady", "kubelet is posting ready status", before, before)},
			want:   []corev1.NodeCondition{cond("Ready", "True", "KubeletReady", "kubelet is posting ready status", before, before), cond("DiskPressure", "True", "KubeletHasDiskPressure", "kubelet has disk pressure", now, now)},
			events: []string{"NodeHasDiskPressure"},
		},
		{
			name:   "PID: new",
			set:    PIDPressureCondition,
			want:   []corev1.NodeCondition{cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available", now, now)},
			events: []string{"NodeHasSufficientPID"},
		},
		{
			name:   "PID: pressure",
			set:    PIDPressureCondition,
			under:  func(in *Inputs) { in.Pressure.PID = true },
			want:   []corev1.NodeCondition{cond("PIDPressure", "True", "KubeletHasInsufficientPID", "kubelet has insufficient PID available", now, now)},
			events: []string{"NodeHasInsufficientPID"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			if tt.under != nil {
				tt.under(&in)
			}
			node := &corev1.Node{Status: corev1.NodeStatus{Conditions: tt.prev}}
			events := tt.set(node, in)
			if diff := cmp.Diff(tt.want, node.Status.Conditions); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.events, reasons(events)); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
			for _, e := range events {
				if want := "Node node-a status is now: " + e.Reason; e.Message != want || e.Type != "Normal" {
					t.Errorf("event = %+v, want a Normal event with message %q", e, want)
				}
			}
		})
	}
}

func reasons(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Reason)
	}
	return out
}

func TestReadyCondition(t *testing.T) {
	const ready = "kubelet is posting ready status"
	full := corev1.ResourceList{"cpu": {}, "memory": {}, "pods": {}, "ephemeral-storage": {}}
	tests := []struct {
		name     string
		mutate   func(*Inputs)
		capacity corev1.ResourceList
		prev     []corev1.NodeCondition
		want     corev1.NodeCondition
		events   []string
	}{
		{
			name: "new and ready: no event",
			want: cond("Ready", "True", "KubeletReady", ready, now, now),
		},
		{
			name: "still ready keeps the transition time",
			prev: []corev1.NodeCondition{cond("Ready", "True", "KubeletReady", ready, before, before)},
			want: cond("Ready", "True", "KubeletReady", ready, now, before),
		},
		{
			name:   "runtime down",
			mutate: func(in *Inputs) { in.RuntimeReady = false },
			prev:   []corev1.NodeCondition{cond("Ready", "True", "KubeletReady", ready, before, before)},
			want:   cond("Ready", "False", "KubeletNotReady", "container runtime is down", now, now),
			events: []string{"NodeNotReady"},
		},
		{
			name: "network not ready with the runtime's words",
			mutate: func(in *Inputs) {
				in.NetworkReady = false
				in.NetworkMessage = NetworkNotReadyMessage("NetworkPluginNotReady", "Network plugin returns error: cni plugin not initialized")
			},
			want: cond("Ready", "False", "KubeletNotReady",
				"container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized", now, now),
		},
		{
			name:   "CSINode not yet initialized",
			mutate: func(in *Inputs) { in.StorageMessage = "CSINode is not yet initialized" },
			want:   cond("Ready", "False", "KubeletNotReady", "CSINode is not yet initialized", now, now),
		},
		{
			name: "storage after the network and before the shutdown, in upstream's order",
			mutate: func(in *Inputs) {
				in.NetworkReady, in.ShuttingDown, in.StorageMessage = false, true, "CSINode is not yet initialized"
			},
			want: cond("Ready", "False", "KubeletNotReady",
				"[container runtime network not ready, CSINode is not yet initialized, node is shutting down]", now, now),
		},
		{
			name:   "shutting down",
			mutate: func(in *Inputs) { in.ShuttingDown = true },
			prev:   []corev1.NodeCondition{cond("Ready", "True", "KubeletReady", ready, before, before)},
			want:   cond("Ready", "False", "KubeletNotReady", "node is shutting down", now, now),
			events: []string{"NodeNotReady"},
		},
		{
			name: "shutting down after the runtime, in upstream's order",
			mutate: func(in *Inputs) {
				in.ShuttingDown = true
				in.RuntimeReady = false
			},
			want: cond("Ready", "False", "KubeletNotReady", "[container runtime is down, node is shutting down]", now, now),
		},
		{
			name: "several reasons are bracketed",
			mutate: func(in *Inputs) {
				in.RuntimeReady, in.RuntimeMessage = false, RuntimeNotReadyMessage("Broken", "oops")
				in.NetworkReady = false
			},
			capacity: corev1.ResourceList{"cpu": {}, "pods": {}},
			prev:     []corev1.NodeCondition{cond("Ready", "False", "KubeletNotReady", "container runtime is down", before, before)},
			want: cond("Ready", "False", "KubeletNotReady",
				"[container runtime not ready: RuntimeReady=false reason:Broken message:oops, container runtime network not ready, missing node capacity for resources: memory, ephemeral-storage]", now, before),
		},
		{
			name:     "no ephemeral-storage needed without localStorageCapacityIsolation",
			mutate:   func(in *Inputs) { in.LocalStorageCapacityIsolation = false },
			capacity: corev1.ResourceList{"cpu": {}, "memory": {}, "pods": {}},
			want:     cond("Ready", "True", "KubeletReady", ready, now, now),
		},
		{
			name:     "ephemeral-storage missing with localStorageCapacityIsolation",
			capacity: corev1.ResourceList{"cpu": {}, "memory": {}, "pods": {}},
			want:     cond("Ready", "False", "KubeletNotReady", "missing node capacity for resources: ephemeral-storage", now, now),
		},
		{
			name:   "back to ready",
			prev:   []corev1.NodeCondition{cond("Ready", "False", "KubeletNotReady", "container runtime is down", before, before)},
			want:   cond("Ready", "True", "KubeletReady", ready, now, now),
			events: []string{"NodeReady"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			if tt.mutate != nil {
				tt.mutate(&in)
			}
			capacity := full
			if tt.capacity != nil {
				capacity = tt.capacity
			}
			node := &corev1.Node{Status: corev1.NodeStatus{Capacity: capacity, Conditions: tt.prev}}
			events := ReadyCondition(node, in)
			if diff := cmp.Diff([]corev1.NodeCondition{tt.want}, node.Status.Conditions); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.events, reasons(events)); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyOrdersConditionsReadyLast(t *testing.T) {
	node := &corev1.Node{}
	events := Apply(node, baseInputs())
	var types []corev1.NodeConditionType
	for _, c := range node.Status.Conditions {
		types = append(types, c.Type)
	}
	if diff := cmp.Diff([]corev1.NodeConditionType{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}, types); diff != "" {
		t.Errorf("condition order mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"}, reasons(events)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	// A second pass over the same snapshot changes nothing but heartbeats.
	again := node.DeepCopy()
	in := baseInputs()
	in.Now = t0.Add(time.Minute)
	if ev := Apply(again, in); len(ev) != 0 {
		t.Errorf("second Apply() events = %v", ev)
	}
	if StatusChanged(&node.Status, &again.Status) {
		t.Errorf("StatusChanged() = true after a heartbeat-only update")
	}
}

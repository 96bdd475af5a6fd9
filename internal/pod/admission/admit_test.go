package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestAdmit(t *testing.T) {
	// The base case admits: a pod asking for 1 cpu and 1Gi beside one
	// active pod asking for 2 cpu and 4Gi on a 4 cpu, 8Gi, 3 pod node.
	base := func() Inputs {
		return Inputs{
			Pod:    testPod("new", "cpu", "1", "memory", "1Gi"),
			Node:   testNode(),
			Active: []*corev1.Pod{testPod("old", "cpu", "2", "memory", "4Gi")},
		}
	}
	tests := []struct {
		name   string
		mutate func(in *Inputs)
		want   Result
	}{{
		name:   "fits",
		mutate: func(in *Inputs) {},
		want:   Result{Admit: true},
	}, {
		name:   "exactly fills the node",
		mutate: func(in *Inputs) { in.Pod = testPod("new", "cpu", "2", "memory", "4Gi") },
		want:   Result{Admit: true},
	}, {
		name:   "out of cpu",
		mutate: func(in *Inputs) { in.Pod = testPod("new", "cpu", "2500m") },
		want:   Result{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 2500, used: 2000, capacity: 4000"},
	}, {
		name:   "out of memory",
		mutate: func(in *Inputs) { in.Pod = testPod("new", "memory", "5Gi") },
		want:   Result{Reason: "OutOfmemory", Message: "Node didn't have enough resource: memory, requested: 5368709120, used: 4294967296, capacity: 8589934592"},
	}, {
		name:   "out of ephemeral storage",
		mutate: func(in *Inputs) { in.Pod = testPod("new", "ephemeral-storage", "101Gi") },
		want:   Result{Reason: "OutOfephemeral-storage", Message: "Node didn't have enough resource: ephemeral-storage, requested: 108447924224, used: 0, capacity: 107374182400"},
	}, {
		name:   "out of hugepages",
		mutate: func(in *Inputs) { in.Pod = testPod("new", "hugepages-2Mi", "2Mi") },
		want:   Result{Reason: "OutOfhugepages-2Mi", Message: "Node didn't have enough resource: hugepages-2Mi, requested: 2097152, used: 0, capacity: 0"},
	}, {
		name: "out of an extended resource",
		mutate: func(in *Inputs) {
			in.Active[0].Spec.Containers[0].Resources.Requests["example.com/gpu"] = q("1")
			in.Pod = testPod("new", "example.com/gpu", "2")
		},
		want: Result{Reason: "OutOfexample.com/gpu", Message: "Node didn't have enough resource: example.com/gpu, requested: 2, used: 1, capacity: 2"},
	}, {
		name:   "an extended resource the node does not know is not checked",
		mutate: func(in *Inputs) { in.Pod = testPod("new", "other.io/fpga", "1") },
		want:   Result{Admit: true},
	}, {
		name: "out of pods",
		mutate: func(in *Inputs) {
			in.Active = append(in.Active, testPod("b"), testPod("c"))
		},
		want: Result{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
	}, {
		name: "pods is reported before cpu",
		mutate: func(in *Inputs) {
			in.Active = append(in.Active, testPod("b"), testPod("c"))
			in.Pod = testPod("new", "cpu", "3")
		},
		want: Result{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
	}, {
		name: "the pod itself among the active pods is not counted",
		mutate: func(in *Inputs) {
			in.Pod = testPod("new", "cpu", "2")
			in.Active = append(in.Active, in.Pod, testPod("c"))
		},
		want: Result{Admit: true},
	}, {
		name:   "no allocatable pods rejects every pod",
		mutate: func(in *Inputs) { delete(in.Node.Status.Allocatable, corev1.ResourcePods) },
		want:   Result{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 0"},
	}, {
		name:   "node selector mismatch",
		mutate: func(in *Inputs) { in.Pod.Spec.NodeSelector = map[string]string{"zone": "z2"} },
		want:   Result{Reason: "NodeAffinity", Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
	}, {
		name: "required node affinity mismatch",
		mutate: func(in *Inputs) {
			in.Pod.Spec.Affinity = affinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"z1"}},
			}})
		},
		want: Result{Reason: "NodeAffinity", Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
	}, {
		name: "resources are reported before affinity",
		mutate: func(in *Inputs) {
			in.Pod = testPod("new", "cpu", "3")
			in.Pod.Spec.NodeSelector = map[string]string{"zone": "z2"}
		},
		want: Result{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000"},
	}, {
		name:   "node name matches",
		mutate: func(in *Inputs) { in.Pod.Spec.NodeName = "node-a" },
		want:   Result{Admit: true},
	}, {
		name:   "node name mismatch",
		mutate: func(in *Inputs) { in.Pod.Spec.NodeName = "node-b" },
		want:   Result{Reason: "NodeName", Message: "Predicate NodeName failed: node(s) didn't match the requested node name"},
	}, {
		name: "host port taken",
		mutate: func(in *Inputs) {
			withHostPort(in.Active[0], "", "", 8080)
			withHostPort(in.Pod, "10.0.0.1", corev1.ProtocolTCP, 8080)
		},
		want: Result{Reason: "NodePorts", Message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
	}, {
		name: "node name is reported before ports",
		mutate: func(in *Inputs) {
			withHostPort(in.Active[0], "", "", 8080)
			withHostPort(in.Pod, "", "", 8080)
			in.Pod.Spec.NodeName = "node-b"
		},
		want: Result{Reason: "NodeName", Message: "Predicate NodeName failed: node(s) didn't match the requested node name"},
	}, {
		name: "untolerated NoExecute taint",
		mutate: func(in *Inputs) {
			in.Node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}
		},
		want: Result{Reason: "TaintToleration", Message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"},
	}, {
		name: "NoSchedule taints are the scheduler's business",
		mutate: func(in *Inputs) {
			in.Node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
		},
		want: Result{Admit: true},
	}, {
		name: "tolerated NoExecute taint",
		mutate: func(in *Inputs) {
			in.Node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}
			in.Pod.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db"}}
		},
		want: Result{Admit: true},
	}, {
		name: "static pods ignore taints",
		mutate: func(in *Inputs) {
			in.Node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}
			in.Pod.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		},
		want: Result{Admit: true},
	}, {
		name: "pods from the API server do not ignore taints",
		mutate: func(in *Inputs) {
			in.Node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}
			in.Pod.Annotations = map[string]string{"kubernetes.io/config.source": "api"}
		},
		want: Result{Reason: "TaintToleration", Message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"},
	}, {
		name: "ports are reported before taints",
		mutate: func(in *Inputs) {
			withHostPort(in.Active[0], "", "", 8080)
			withHostPort(in.Pod, "", "", 8080)
			in.Node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoExecute}}
		},
		want: Result{Reason: "NodePorts", Message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
	}, {
		name:   "os label of another OS",
		mutate: func(in *Inputs) { in.Pod.Labels = map[string]string{corev1.LabelOSStable: "plan9"} },
		want:   Result{Reason: "PodOSSelectorNodeLabelDoesNotMatch", Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
	}, {
		name:   "spec.os of another OS",
		mutate: func(in *Inputs) { in.Pod.Spec.OS = &corev1.PodOS{Name: "windows"} },
		want:   Result{Reason: "PodOSNotSupported", Message: "Failed to admit pod as the OS field doesn't match node OS"},
	}, {
		name: "os is reported before resources",
		mutate: func(in *Inputs) {
			in.Pod = testPod("new", "cpu", "30")
			in.Pod.Spec.OS = &corev1.PodOS{Name: "windows"}
		},
		want: Result{Reason: "PodOSNotSupported", Message: "Failed to admit pod as the OS field doesn't match node OS"},
	}, {
		name: "strict supplemental groups on a node without support",
		mutate: func(in *Inputs) {
			in.Pod.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroupsPolicy: ptrTo(corev1.SupplementalGroupsPolicyStrict)}
		},
		want: Result{Reason: "SupplementalGroupsPolicyNotSupported", Message: "SupplementalGroupsPolicy=Strict is not supported in this node"},
	}, {
		name: "strict supplemental groups on a node with support",
		mutate: func(in *Inputs) {
			in.Pod.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroupsPolicy: ptrTo(corev1.SupplementalGroupsPolicyStrict)}
			in.Node.Status.Features = &corev1.NodeFeatures{SupplementalGroupsPolicy: ptrTo(true)}
		},
		want: Result{Admit: true},
	}, {
		name: "merge supplemental groups needs no support",
		mutate: func(in *Inputs) {
			in.Pod.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroupsPolicy: ptrTo(corev1.SupplementalGroupsPolicyMerge)}
		},
		want: Result{Admit: true},
	}, {
		name: "no node: node checks are skipped",
		mutate: func(in *Inputs) {
			in.Node = nil
			in.Pod = testPod("new", "cpu", "300")
			in.Pod.Spec.NodeName = "elsewhere"
			in.Pod.Spec.NodeSelector = map[string]string{"zone": "z9"}
		},
		want: Result{Admit: true},
	}, {
		name: "no node: max pods",
		mutate: func(in *Inputs) {
			in.Node = nil
			in.MaxPods = 1
		},
		want: Result{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"},
	}, {
		name: "no node: host ports",
		mutate: func(in *Inputs) {
			in.Node = nil
			withHostPort(in.Active[0], "", corev1.ProtocolUDP, 53)
			withHostPort(in.Pod, "", corev1.ProtocolUDP, 53)
		},
		want: Result{Reason: "NodePorts", Message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
	}, {
		name: "no node: os",
		mutate: func(in *Inputs) {
			in.Node = nil
			in.Pod.Spec.OS = &corev1.PodOS{Name: "windows"}
		},
		want: Result{Reason: "PodOSNotSupported", Message: "Failed to admit pod as the OS field doesn't match node OS"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			tt.mutate(&in)
			if diff := cmp.Diff(tt.want, Admit(in)); diff != "" {
				t.Errorf("Admit (-want +got):\n%s", diff)
			}
		})
	}
}

func affinity(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

func TestRejectedStatus(t *testing.T) {
	pod := testPod("new", "cpu", "1")
	got := RejectedStatus(pod, Result{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 1000, used: 4000, capacity: 4000"})
	want := corev1.PodStatus{
		Phase:    corev1.PodFailed,
		Reason:   "OutOfcpu",
		Message:  "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 4000, capacity: 4000",
		QOSClass: corev1.PodQOSBurstable,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RejectedStatus (-want +got):\n%s", diff)
	}
}

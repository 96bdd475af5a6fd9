package config

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// validateCluster checks the fields berth honours in cluster mode.
func validateCluster(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	for name, d := range map[string]int64{
		"nodeStatusUpdateFrequency": int64(kc.NodeStatusUpdateFrequency.Duration),
		"nodeStatusReportFrequency": int64(kc.NodeStatusReportFrequency.Duration),
		"nodeLeaseDurationSeconds":  int64(kc.NodeLeaseDurationSeconds),
	} {
		if d <= 0 {
			ps = append(ps, fieldProblem(name, "invalid value %d: must be greater than zero", d))
		}
	}
	for name, v := range map[string]int64{
		"kubeAPIBurst": int64(kc.KubeAPIBurst),
		"eventBurst":   int64(kc.EventBurst),
	} {
		if v < 0 {
			ps = append(ps, fieldProblem(name, "invalid value %d: must not be negative", v))
		}
	}
	for name, q := range map[string]*int32{"kubeAPIQPS": kc.KubeAPIQPS, "eventRecordQPS": kc.EventRecordQPS} {
		if q != nil && *q < 0 {
			ps = append(ps, fieldProblem(name, "invalid value %d: must not be negative", *q))
		}
	}
	if kc.NodeStatusMaxImages != nil && *kc.NodeStatusMaxImages < -1 {
		ps = append(ps, fieldProblem("nodeStatusMaxImages", "invalid value %d: must be -1 (no limit) or more", *kc.NodeStatusMaxImages))
	}
	switch kc.ContentType {
	case "application/vnd.kubernetes.protobuf", "application/json":
	default:
		ps = append(ps, fieldProblem("contentType", "invalid value %q: must be application/vnd.kubernetes.protobuf or application/json", kc.ContentType))
	}
	ps = append(ps, checkReserved("kubeReserved", kc.KubeReserved)...)
	ps = append(ps, checkReserved("systemReserved", kc.SystemReserved)...)
	for i, t := range kc.RegisterWithTaints {
		if err := checkTaint(t); err != nil {
			ps = append(ps, fieldProblem("registerWithTaints", "taint %d: %v", i, err))
		}
	}
	return ps
}

// checkReserved accepts the resources upstream reserves: cpu, memory,
// ephemeral-storage, pid and hugepages-<size>, each a non-negative quantity.
func checkReserved(field string, m map[string]string) []problem {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	var ps []problem
	for _, name := range names {
		switch {
		case name == string(corev1.ResourceCPU), name == string(corev1.ResourceMemory),
			name == string(corev1.ResourceEphemeralStorage), name == "pid",
			strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
		default:
			ps = append(ps, fieldProblem(field, "unsupported resource %q: must be cpu, memory, ephemeral-storage, pid or hugepages-<size>", name))
			continue
		}
		q, err := resource.ParseQuantity(m[name])
		if err != nil {
			ps = append(ps, fieldProblem(field, "resource %q: invalid quantity %q", name, m[name]))
			continue
		}
		if q.Sign() < 0 {
			ps = append(ps, fieldProblem(field, "resource %q: must not be negative", name))
		}
	}
	return ps
}

func checkTaint(t corev1.Taint) error {
	if t.Key == "" {
		return fmt.Errorf("key must not be empty")
	}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return fmt.Errorf("invalid effect %q", t.Effect)
}

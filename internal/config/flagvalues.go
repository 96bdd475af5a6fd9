package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The pflag.Value types of upstream's k8s.io/kubernetes/pkg/util/flag that
// berth's flags need (berth does not import k8s.io/kubernetes): same
// syntax, same Type names.

// ipValue is an IP address flag (upstream's IPVar): empty or a valid IP.
type ipValue struct {
	ip *string
}

func (v *ipValue) String() string {
	if v.ip == nil {
		return ""
	}
	return *v.ip
}

func (v *ipValue) Set(s string) error {
	if s != "" && net.ParseIP(s) == nil {
		return fmt.Errorf("%q is not a valid IP address", s)
	}
	*v.ip = s
	return nil
}

func (v *ipValue) Type() string { return "ip" }

// reservedMemoryValue is --reserved-memory (upstream's ReservedMemoryVar):
// "numaNode:type=quantity[,type=quantity...]" items separated by ";", the
// flag repeatable.
type reservedMemoryValue struct {
	value *[]kubeletconfigv1beta1.MemoryReservation
	set   bool
}

func (v *reservedMemoryValue) String() string {
	if v.value == nil {
		return ""
	}
	var items []string
	for _, r := range *v.value {
		items = append(items, fmt.Sprintf("%d:%v", r.NumaNode, r.Limits))
	}
	return strings.Join(items, ";")
}

func (v *reservedMemoryValue) Set(s string) error {
	if !v.set {
		*v.value = nil
		v.set = true
	}
	if s == "" {
		return nil
	}
	for _, item := range strings.Split(s, ";") {
		r, err := parseMemoryReservation(item)
		if err != nil {
			return err
		}
		*v.value = append(*v.value, r)
	}
	return nil
}

func (v *reservedMemoryValue) Type() string { return "reserved-memory" }

func parseMemoryReservation(item string) (kubeletconfigv1beta1.MemoryReservation, error) {
	node, limits, ok := strings.Cut(item, ":")
	if !ok {
		return kubeletconfigv1beta1.MemoryReservation{}, fmt.Errorf("reserved memory %q: want numaNodeID:type=quantity[,type=quantity...]", item)
	}
	id, err := strconv.ParseInt(node, 10, 32)
	if err != nil {
		return kubeletconfigv1beta1.MemoryReservation{}, fmt.Errorf("reserved memory %q: NUMA node ID %q is not an integer", item, node)
	}
	r := kubeletconfigv1beta1.MemoryReservation{NumaNode: int32(id), Limits: corev1.ResourceList{}}
	for _, l := range strings.Split(limits, ",") {
		name, qty, ok := strings.Cut(l, "=")
		if !ok {
			return r, fmt.Errorf("reserved memory %q: want type=quantity, got %q", item, l)
		}
		if name != string(corev1.ResourceMemory) && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
			return r, fmt.Errorf("reserved memory %q: unknown memory type %q", item, name)
		}
		q, err := resource.ParseQuantity(qty)
		if err != nil {
			return r, fmt.Errorf("reserved memory %q: parse quantity %q: %w", item, qty, err)
		}
		r.Limits[corev1.ResourceName(name)] = q
	}
	return r, nil
}

func splitComma(s string) []string { return strings.Split(s, ",") }

func joinComma(items []string) string { return strings.Join(items, ",") }

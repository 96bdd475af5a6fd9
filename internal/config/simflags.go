package config

import corev1 "k8s.io/api/core/v1"

// ParseNodeLabels parses --node-labels items ("key=value") with the
// kubelet's rules, for berth simulate's flag of the same name.
func ParseNodeLabels(items []string) (map[string]string, error) { return parseNodeLabels(items) }

// ParseTaints parses --register-with-taints items ("key[=value]:Effect"),
// for berth simulate's flag of the same name.
func ParseTaints(items []string) ([]corev1.Taint, error) { return parseTaints(items) }

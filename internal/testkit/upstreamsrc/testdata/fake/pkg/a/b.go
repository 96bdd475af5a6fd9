package a

import "k8s.io/fake/pkg/v9"

func labels() []string {
	return []string{named.Label, "x"}
}

// Package downward computes downward API values: what a pod's fieldRef and
// resourceFieldRef resolve to. Both environment variables (kuberuntime)
// and downwardAPI volume files (volume) use it. It is pure.
package downward

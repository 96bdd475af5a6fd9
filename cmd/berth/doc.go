// Command berth is a Kubernetes node agent that stands in for the kubelet.
// It accepts the upstream kubelet flags and KubeletConfiguration, loads them
// with internal/config and hands the result to internal/app/agent.
package main

// Package expansion expands $(VAR) references the way the Kubernetes API
// defines them for command, args, env values and subPathExpr. It is pure.
// kuberuntime expands container commands, env and subPathExpr with it; the
// prober expands exec probe commands.
package expansion

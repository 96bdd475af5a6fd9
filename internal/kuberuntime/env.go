package kuberuntime

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerEnv resolves the container's environment: each value is expanded
// against the variables declared before it, and a later declaration of a
// name replaces the earlier one in place. It returns the CRI list (in
// declaration order) and the final map, for command and args expansion.
//
// Only literal values are supported this round: envFrom and valueFrom make
// the container fail to start (CreateContainerConfigError) rather than run
// with a variable silently missing.
func containerEnv(c *corev1.Container) ([]*runtimeapi.KeyValue, map[string]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, nil, fmt.Errorf("envFrom is not supported yet (container %q)", c.Name)
	}
	vars := make(map[string]string, len(c.Env))
	index := make(map[string]int, len(c.Env))
	var out []*runtimeapi.KeyValue
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			return nil, nil, fmt.Errorf("env var %q: valueFrom is not supported yet", e.Name)
		}
		v := e.Value
		if v != "" {
			v = expand(v, vars)
		}
		vars[e.Name] = v
		if i, ok := index[e.Name]; ok {
			out[i].Value = []byte(v)
			continue
		}
		index[e.Name] = len(out)
		out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(v)})
	}
	return out, vars, nil
}

// expandCommand expands $(VAR) references in the container's command and
// args (upstream ExpandContainerCommandAndArgs). Empty stays nil.
func expandCommand(c *corev1.Container, vars map[string]string) (command, args []string) {
	for _, s := range c.Command {
		command = append(command, expand(s, vars))
	}
	for _, s := range c.Args {
		args = append(args, expand(s, vars))
	}
	return command, args
}

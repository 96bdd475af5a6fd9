package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// envPod serves its container's environment (`env` output) on port 8080.
func envPod(name string, env []corev1.EnvVar, envFrom []corev1.EnvFromSource) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "env-echo"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "web", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "mkdir -p /www && env > /www/index.html && exec httpd -f -p 8080 -h /www"},
				Env:     env, EnvFrom: envFrom,
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
			}},
		},
	}
}

func keyRef(kind, name, key string, optional bool) *corev1.EnvVarSource {
	ref := corev1.LocalObjectReference{Name: name}
	if kind == "secret" {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref, Key: key, Optional: ptr.To(optional)}}
	}
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref, Key: key, Optional: ptr.To(optional)}}
}

func (e *clusterEnv) testEnv(t *testing.T) {
	ctx := context.Background()
	core := e.admin.CoreV1()
	_, err := core.ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "env-config", Namespace: "default"},
		Data:       map[string]string{"color": "blue", "size": "L"},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = core.Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "env-secret", Namespace: "default"},
		Data:       map[string][]byte{"password": []byte("s3cret")},
	}, metav1.CreateOptions{})
	must(t, err)
	svc, err := core.Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "env-db", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "sql", Port: 5432}, {Name: "metrics", Port: 9000, Protocol: corev1.ProtocolUDP},
		}},
	}, metav1.CreateOptions{})
	must(t, err)
	master, err := core.Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	must(t, err)

	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	res := func(r, divisor string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: r, Divisor: resource.MustParse(divisor)}}
	}
	pod := envPod("env-echo", []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: field("metadata.name")},
		{Name: "POD_NAMESPACE", ValueFrom: field("metadata.namespace")},
		{Name: "POD_UID", ValueFrom: field("metadata.uid")},
		{Name: "POD_APP", ValueFrom: field("metadata.labels['app']")},
		{Name: "NODE", ValueFrom: field("spec.nodeName")},
		{Name: "POD_IP", ValueFrom: field("status.podIP")},
		{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
		{Name: "MEM_LIMIT_MI", ValueFrom: res("limits.memory", "1Mi")},
		{Name: "CPU_REQUEST_M", ValueFrom: res("requests.cpu", "1m")},
		{Name: "CPU_LIMIT", ValueFrom: res("limits.cpu", "1")},
		{Name: "COLOR", ValueFrom: keyRef("configMap", "env-config", "color", false)},
		{Name: "PASSWORD", ValueFrom: keyRef("secret", "env-secret", "password", false)},
		{Name: "MISSING_KEY", ValueFrom: keyRef("configMap", "env-config", "nope", true)},
		{Name: "MISSING_SECRET", ValueFrom: keyRef("secret", "no-such-secret", "k", true)},
		{Name: "GREETING", Value: "$(COLOR)-$(POD_NAME)-$(KUBERNETES_SERVICE_PORT)"},
	}, []corev1.EnvFromSource{
		{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "env-config"}}},
	})
	_, err = core.Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	running := e.waitPodRunning(t, "env-echo")

	var vars map[string]string
	e.node.waitFor("env-echo serves its environment", func() bool {
		body, err := httpGet("http://" + running.Status.PodIP + ":8080/")
		if err != nil {
			return false
		}
		vars = parseEnv(body)
		return len(vars) > 0
	})
	want := map[string]string{
		"POD_NAME": "env-echo", "POD_NAMESPACE": "default", "POD_UID": string(running.UID), "POD_APP": "env-echo",
		"NODE": nodeName, "POD_IP": running.Status.PodIP, "HOST_IP": running.Status.HostIP,
		"MEM_LIMIT_MI": "64", "CPU_REQUEST_M": "50",
		"COLOR": "blue", "PASSWORD": "s3cret", "CFG_color": "blue", "CFG_size": "L",
		"GREETING":                "blue-env-echo-" + strconv.Itoa(int(master.Spec.Ports[0].Port)),
		"KUBERNETES_SERVICE_HOST": master.Spec.ClusterIP,
		"ENV_DB_SERVICE_HOST":     svc.Spec.ClusterIP,
		"ENV_DB_SERVICE_PORT":     "5432",
		"ENV_DB_SERVICE_PORT_SQL": "5432",
		"ENV_DB_PORT_9000_UDP":    "udp://" + svc.Spec.ClusterIP + ":9000",
	}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("%s = %q, want %q", k, vars[k], v)
		}
	}
	for _, k := range []string{"MISSING_KEY", "MISSING_SECRET"} {
		if v, ok := vars[k]; ok {
			t.Errorf("%s is set (%q), want it absent", k, v)
		}
	}
	// The limit the container does not set is the node's allocatable.
	if n, err := strconv.Atoi(vars["CPU_LIMIT"]); err != nil || n < 1 {
		t.Errorf("CPU_LIMIT = %q, want the node's allocatable cpu", vars["CPU_LIMIT"])
	}

	broken := envPod("env-broken", []corev1.EnvVar{{Name: "X", ValueFrom: keyRef("configMap", "env-config", "nope", false)}}, nil)
	_, err = core.Pods("default").Create(ctx, broken, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "env-broken waits with CreateContainerConfigError", func(ctx context.Context) (bool, error) {
		p, err := core.Pods("default").Get(ctx, "env-broken", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" {
				if w.Message != "couldn't find key nope in ConfigMap default/env-config" {
					t.Errorf("waiting message = %q", w.Message)
				}
				return true, nil
			}
		}
		return false, nil
	})
	for _, name := range []string{"env-echo", "env-broken"} {
		must(t, core.Pods("default").Delete(ctx, name, metav1.DeleteOptions{}))
	}
	must(t, core.Services("default").Delete(ctx, "env-db", metav1.DeleteOptions{}))
}

// parseEnv parses `env` output; a line without "=" continues the previous
// value.
func parseEnv(body string) map[string]string {
	vars := map[string]string{}
	last := ""
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			if last != "" {
				vars[last] += "\n" + line
			}
			continue
		}
		vars[k], last = v, k
	}
	return vars
}

package depswarm

import (
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/pflag"
	_ "google.golang.org/grpc"
	_ "google.golang.org/grpc/test/bufconn"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/util/validation"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/cri-api/pkg/apis/runtime/v1"
	_ "k8s.io/klog/v2"
	_ "k8s.io/kubelet/config/v1beta1"
	_ "k8s.io/utils/clock/testing"
	_ "sigs.k8s.io/yaml"
	_ "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/apimachinery/pkg/util/yaml"
)

#!/usr/bin/env bash
# Printed by `make run` before berth starts in the foreground.
cat <<'HINTS'
------------------------------------------------------------------------------
berth starts now with examples/kubelet-config.yaml and the static pods in
examples/static-pods/ (web: busybox httpd on :8080; init-demo: an init
container, then a main one). In another terminal, once the pods run:

  curl -s localhost:10255/pods | grep -o '"podIP":"[^"]*"'   # pod IPs
  curl -s "http://$(hack/pod-ip.sh web):8080/"              # hello from berth
  curl -s localhost:10248/healthz                           # ok

Edit or add files in examples/static-pods/ and berth picks them up.
Stop berth with Ctrl-C. As with the kubelet, pods outlive it; to remove them,
run berth once on an empty directory and stop it when they are gone:
  mkdir -p /tmp/no-pods && bin/berth --config examples/kubelet-config.yaml --pod-manifest-path /tmp/no-pods
------------------------------------------------------------------------------
HINTS

#!/usr/bin/env bash
# Prints the IP of a running static pod, asked from berth's read-only API.
#
#   hack/pod-ip.sh web            # the pod web-<node name>
#   curl -s "http://$(hack/pod-ip.sh web):8080/"
#
# READ_ONLY_URL overrides the API address (default http://127.0.0.1:10255).
set -euo pipefail

name=${1:?usage: $0 POD_NAME (as in the manifest, without the node suffix)}
node=${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
url=${READ_ONLY_URL:-http://127.0.0.1:10255}

# One pod per line, then the podIP of the pod named $name-$node.
ip=$(curl -fsS "$url/pods" | sed 's/"metadata":/\n&/g' |
	grep -F "\"name\":\"$name-$node\"" | grep -o '"podIP":"[^"]*"' | head -n1 | cut -d'"' -f4) || true
[[ -n $ip ]] || { echo "pod-ip: no IP for pod $name-$node at $url/pods (is berth running, the pod started?)" >&2; exit 1; }
echo "$ip"

#!/bin/sh
# The image's entrypoint. guardrail starts offline: the detector is in the image and
# HF_HUB_OFFLINE=1 forbids any download. Arguments are a guardrail command line
# ("serve", "check ...", "demo"); none means "serve". Settings come from the
# environment (GUARDRAIL_<SECTION>__<FIELD>) or a config file (GUARDRAIL_CONFIG).
set -eu
if [ "$#" -eq 0 ]; then
  set -- serve
fi
# A container listens on every interface, unless the config file or the environment
# says where: the image sets no GUARDRAIL_* variable, since one would beat the file.
if [ -z "${GUARDRAIL_SERVER__HOST:-}" ] && ! python3 - "${GUARDRAIL_CONFIG:-}" <<'EOF'
import sys, yaml
try:
    data = yaml.safe_load(open(sys.argv[1], encoding="utf-8")) if sys.argv[1] else None
except (OSError, yaml.YAMLError):
    data = None  # guardrail itself reports a file it cannot read
server = data.get("server") if isinstance(data, dict) else None
sys.exit(0 if isinstance(server, dict) and "host" in server else 1)
EOF
then
  export GUARDRAIL_SERVER__HOST=0.0.0.0
fi
if [ "$1" = "serve" ] && [ -n "${GUARDRAIL_CONFIG:-}" ]; then
  shift
  set -- serve --config "$GUARDRAIL_CONFIG" "$@"
fi
# exec: guardrail is PID 1's child no more; it gets SIGTERM itself and drains
exec guardrail "$@"

#!/bin/sh
# The image's entrypoint. guardrail starts offline: the detector is in the image and
# HF_HUB_OFFLINE=1 forbids any download. Arguments are a guardrail command line
# ("serve", "check ...", "demo"); none means "serve". Settings come from the
# environment (GUARDRAIL_<SECTION>__<FIELD>) or a config file (GUARDRAIL_CONFIG).
set -eu
if [ "$#" -eq 0 ]; then
  set -- serve
fi
if [ "$1" = "serve" ] && [ -n "${GUARDRAIL_CONFIG:-}" ]; then
  shift
  set -- serve --config "$GUARDRAIL_CONFIG" "$@"
fi
# exec: guardrail is PID 1's child no more; it gets SIGTERM itself and drains
exec guardrail "$@"

#!/bin/sh
# Handler of the runtime Lambda (lib/cloud/runtime-function.ts). The Lambda Web Adapter
# (AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap) runs this script, waits until GET /health answers on
# AWS_LWA_PORT, then forwards every invocation to the server as an HTTP request and streams the
# response back. The asset root is the python-runtime directory, so the package is beside this file.
cd "$(dirname "$0")" || exit 1
exec python3 -m platform_runtime.server --port "${AWS_LWA_PORT:-8080}" --host 127.0.0.1

#!/bin/sh
# A process-backed pod's process: records its environment and arguments,
# asks the API server who it is with the kubeconfig it was given, then
# sleeps until stopped. Files go to $OUT_DIR/<namespace>.<pod>.*.
set -eu
out="$OUT_DIR/$POD_NAMESPACE.$POD_NAME"
env | sort > "$out.env"
printf '%s\n' "$@" > "$out.args"
server=$(sed -n 's/^ *server: //p' "$KUBECONFIG")
ca=$(sed -n 's/^ *certificate-authority: //p' "$KUBECONFIG")
token=$(sed -n 's/^ *tokenFile: //p' "$KUBECONFIG")
curl -sS --fail --cacert "$ca" -H "Authorization: Bearer $(cat "$token")" \
  -H 'Content-Type: application/json' -X POST \
  -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' \
  "$server/apis/authentication.k8s.io/v1/selfsubjectreviews" > "$out.review.tmp"
mv "$out.review.tmp" "$out.review"
echo $$ > "$out.pid"
exec sleep 3600

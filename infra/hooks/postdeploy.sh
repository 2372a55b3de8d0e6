#!/bin/sh
# azd postdeploy hook: subscribe the blob trigger to BlobCreated events of the `transcripts`
# container (Event Grid system topic -> Functions blob extension webhook of `start_run`).
#
# It runs after `azd deploy` (so also at the end of `azd up`) because Event Grid validates the
# webhook when the subscription is created, and the endpoint answers only once the app with the
# Event Grid blob trigger is running. The subscription itself is infra/modules/
# blob-event-subscription.bicep, deployed to the resource group with the Azure CLI; it is
# idempotent, so every deploy re-applies it.
#
# Needs: the Azure CLI, logged in (`az login`) to the tenant of the azd environment.
# Skip it: `azd env set BLOB_EVENT_SUBSCRIPTION false`.
# Run it by hand: eval "$(azd env get-values)" && sh infra/hooks/postdeploy.sh
set -eu

if [ "${BLOB_EVENT_SUBSCRIPTION:-true}" = "false" ]; then
  echo "postdeploy: BLOB_EVENT_SUBSCRIPTION=false, not creating the Event Grid subscription"
  exit 0
fi

missing=""
for name in AZURE_SUBSCRIPTION_ID AZURE_RESOURCE_GROUP AZURE_FUNCTION_APP_NAME \
  AZURE_EVENTGRID_SYSTEM_TOPIC_NAME; do
  eval "value=\${$name:-}"
  [ -n "$value" ] || missing="$missing $name"
done
if [ -n "$missing" ]; then
  echo "postdeploy: missing$missing; run through azd, or eval \"\$(azd env get-values)\" first" >&2
  exit 2
fi
if ! command -v az >/dev/null 2>&1; then
  echo "postdeploy: the Azure CLI (az) is needed to create the Event Grid subscription" >&2
  exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
template="$here/../modules/blob-event-subscription.bicep"
attempts=${BLOB_EVENT_SUBSCRIPTION_ATTEMPTS:-5}
delay=${BLOB_EVENT_SUBSCRIPTION_DELAY_S:-30}

# The first attempt can fail while the freshly deployed app is still starting (webhook
# validation times out or gets a 404), so retry a few times.
n=1
while :; do
  echo "postdeploy: Event Grid subscription transcripts -> $AZURE_FUNCTION_APP_NAME/start_run (attempt $n/$attempts)"
  if az deployment group create \
    --subscription "$AZURE_SUBSCRIPTION_ID" \
    --resource-group "$AZURE_RESOURCE_GROUP" \
    --name blob-event-subscription \
    --template-file "$template" \
    --parameters systemTopicName="$AZURE_EVENTGRID_SYSTEM_TOPIC_NAME" \
    functionAppName="$AZURE_FUNCTION_APP_NAME" \
    --output none; then
    echo "postdeploy: done; blobs uploaded to transcripts/{project}/ now start runs"
    exit 0
  fi
  if [ "$n" -ge "$attempts" ]; then
    echo "postdeploy: could not create the subscription. Is start_run a blob trigger with" >&2
    echo "source=EventGrid, and is the app running? See docs/DEPLOY.md (Troubleshooting)." >&2
    exit 1
  fi
  n=$((n + 1))
  sleep "$delay"
done

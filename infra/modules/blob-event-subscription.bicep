// Event Grid subscription: BlobCreated in `transcripts` -> the Functions blob extension webhook
// of the `start_run` function (blob trigger with source=EventGrid).
//
// Deployed by infra/hooks/postdeploy.sh after `azd deploy`, not by main.bicep: Event Grid sends a
// validation request to the webhook when the subscription is created, and the blob extension
// answers it only once the app with the Event Grid blob trigger is deployed and running. Re-running
// it is harmless (same name, same properties). The blobs_extension system key is read here with
// listKeys(), so it never passes through a shell variable, a log or the azd environment.

targetScope = 'resourceGroup'

@description('Event Grid system topic on the storage account (main.bicep output AZURE_EVENTGRID_SYSTEM_TOPIC_NAME).')
param systemTopicName string

@description('Function App name (main.bicep output AZURE_FUNCTION_APP_NAME).')
param functionAppName string

@description('Name of the blob-triggered function (@app.function_name in function_app.py).')
param functionName string = 'start_run'

@description('Container the trigger watches (the first segment of its path).')
param containerName string = 'transcripts'

@description('Name of the event subscription.')
param subscriptionName string = 'transcripts-blob-created'

resource topic 'Microsoft.EventGrid/systemTopics@2022-06-15' existing = {
  name: systemTopicName
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

var blobsExtensionKey = listKeys('${functionApp.id}/host/default', '2024-04-01').systemKeys.blobs_extension
var webhookBase = 'https://${functionApp.properties.defaultHostName}/runtime/webhooks/blobs'

resource subscription 'Microsoft.EventGrid/systemTopics/eventSubscriptions@2022-06-15' = {
  parent: topic
  name: subscriptionName
  properties: {
    destination: {
      endpointType: 'WebHook'
      properties: {
        endpointUrl: '${webhookBase}?functionName=Host.Functions.${functionName}&code=${blobsExtensionKey}'
        // The blob extension handles one blob per invocation.
        maxEventsPerBatch: 1
        preferredBatchSizeInKilobytes: 64
      }
    }
    filter: {
      includedEventTypes: [
        'Microsoft.Storage.BlobCreated'
      ]
      subjectBeginsWith: '/blobServices/default/containers/${containerName}/blobs/'
    }
    eventDeliverySchema: 'EventGridSchema'
    // Event Grid retries with back-off; after 24 h an undelivered event is dropped (upload again).
    retryPolicy: {
      maxDeliveryAttempts: 30
      eventTimeToLiveInMinutes: 1440
    }
  }
}

output name string = subscription.name

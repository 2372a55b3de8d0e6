// Event Grid system topic on the storage account: the event source of the blob trigger in Azure.
//
// On Flex Consumption the blob trigger must use `source=EventGrid` (the polling source is not
// available on this plan). The subscription that sends BlobCreated events for the `transcripts`
// container to the Functions blob extension webhook is created after the code is deployed
// (blob-event-subscription.bicep, run by infra/hooks/postdeploy.sh): Event Grid validates a
// webhook when the subscription is created, and the endpoint only answers once the app with the
// Event Grid blob trigger is running.

@description('System topic name.')
param name string

@description('Azure region (the storage account\'s).')
param location string

@description('Tags for the topic.')
param tags object = {}

@description('Resource id of the storage account whose events are published.')
param storageAccountId string

resource topic 'Microsoft.EventGrid/systemTopics@2022-06-15' = {
  name: name
  location: location
  tags: tags
  properties: {
    source: storageAccountId
    topicType: 'Microsoft.Storage.StorageAccounts'
  }
}

output id string = topic.id
output name string = topic.name

// Optional Azure OpenAI account with one chat and one embedding deployment.
//
// Local (key) authentication is disabled: the Function App calls it with its managed identity
// (role Cognitive Services OpenAI User, see rbac.bicep). Deployment capacity is in units of
// 1,000 tokens per minute for Standard / GlobalStandard deployments; quota is per subscription,
// region and model, so `azd provision` fails if the capacity asked for is not available.

@description('Azure OpenAI account name; also its custom subdomain (needed for Entra ID auth).')
param name string

@description('Azure region (model availability differs by region).')
param location string

@description('Tags for the account.')
param tags object = {}

@description('Chat model, e.g. gpt-4o.')
param chatModelName string

@description('Chat model version, e.g. 2024-11-20.')
param chatModelVersion string

@description('Name of the chat deployment (the "model" the app passes in each call).')
param chatDeploymentName string

@description('Chat deployment type.')
@allowed([
  'Standard'
  'GlobalStandard'
  'DataZoneStandard'
])
param chatDeploymentSku string = 'GlobalStandard'

@description('Chat deployment capacity in thousands of tokens per minute.')
@minValue(1)
param chatDeploymentCapacity int

@description('Embedding model, e.g. text-embedding-3-small.')
param embeddingModelName string

@description('Embedding model version, e.g. 1.')
param embeddingModelVersion string

@description('Name of the embedding deployment.')
param embeddingDeploymentName string

@description('Embedding deployment type.')
@allowed([
  'Standard'
  'GlobalStandard'
  'DataZoneStandard'
])
param embeddingDeploymentSku string = 'Standard'

@description('Embedding deployment capacity in thousands of tokens per minute.')
@minValue(1)
param embeddingDeploymentCapacity int

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  name: name
  location: location
  tags: tags
  kind: 'OpenAI'
  sku: {
    name: 'S0'
  }
  // Not used by the app; lets the account reach other resources (e.g. storage) with Entra ID.
  identity: {
    type: 'SystemAssigned'
  }
  properties: {
    customSubDomainName: name
    disableLocalAuth: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
    }
  }
}

resource chat 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: chatDeploymentName
  sku: {
    name: chatDeploymentSku
    capacity: chatDeploymentCapacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: chatModelName
      version: chatModelVersion
    }
  }
}

// Deployments on one account are created one at a time: concurrent writes fail with a conflict.
resource embedding 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: embeddingDeploymentName
  dependsOn: [
    chat
  ]
  sku: {
    name: embeddingDeploymentSku
    capacity: embeddingDeploymentCapacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: embeddingModelName
      version: embeddingModelVersion
    }
  }
}

output id string = account.id
output name string = account.name
output endpoint string = account.properties.endpoint
output chatDeploymentName string = chat.name
output embeddingDeploymentName string = embedding.name

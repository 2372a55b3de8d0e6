// Role assignments, all at resource scope (never the resource group or subscription).
//
// The app's managed identity:
//   storage account    Storage Blob Data Owner        host storage, blob trigger, deployment package,
//                                                     the app's containers
//                      Storage Queue Data Contributor queue triggers, the app's bus, and the blob
//                                                     trigger's poison queue (webjobs-blobtrigger-poison)
//                      Storage Table Data Contributor the host's diagnostic events table
//   Key Vault          Key Vault Secrets User         resolve Key Vault references
//   App Insights       Monitoring Metrics Publisher   telemetry with Entra ID auth (local auth off)
//   Azure OpenAI       Cognitive Services OpenAI User when the optional account is deployed
// The deploying user (principalId, optional): blob + queue data contributor (upload transcripts,
// run the loaders, inspect poison queues), Key Vault Secrets Officer (set secrets), and
// Cognitive Services OpenAI User (run the CLI against the deployed model).

@description('Principal id of the Function App\'s user-assigned identity.')
param appPrincipalId string

@description('Object id of the deploying user or CI principal; empty grants nothing.')
param userPrincipalId string = ''

@description('Type of userPrincipalId.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param userPrincipalType string = 'User'

param storageAccountName string
param keyVaultName string
param applicationInsightsName string

@description('Azure OpenAI account name; empty when the optional account is not deployed.')
param openAiAccountName string = ''

// Built-in role definition ids (the same in every tenant).
var roles = {
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageBlobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
  cognitiveServicesOpenAIUser: '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd'
}

var appStorageRoles = [
  roles.storageBlobDataOwner
  roles.storageQueueDataContributor
  roles.storageTableDataContributor
]

var userStorageRoles = [
  roles.storageBlobDataContributor
  roles.storageQueueDataContributor
]

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource openAi 'Microsoft.CognitiveServices/accounts@2024-10-01' existing = if (!empty(openAiAccountName)) {
  name: openAiAccountName
}

// ---- the app's identity ------------------------------------------------------------------------

resource appStorage 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for roleId in appStorageRoles: {
  name: guid(storage.id, appPrincipalId, roleId)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}]

resource appSecrets 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, appPrincipalId, roles.keyVaultSecretsUser)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsUser)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource appTelemetry 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(applicationInsights.id, appPrincipalId, roles.monitoringMetricsPublisher)
  scope: applicationInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.monitoringMetricsPublisher)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource appOpenAi 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(openAiAccountName)) {
  name: guid(openAi.id, appPrincipalId, roles.cognitiveServicesOpenAIUser)
  scope: openAi
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.cognitiveServicesOpenAIUser)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// ---- the deploying user (optional) ------------------------------------------------------------

resource userStorage 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for roleId in userStorageRoles: if (!empty(userPrincipalId)) {
  name: guid(storage.id, userPrincipalId, roleId)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
    principalId: userPrincipalId
    principalType: userPrincipalType
  }
}]

resource userSecrets 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(userPrincipalId)) {
  name: guid(vault.id, userPrincipalId, roles.keyVaultSecretsOfficer)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsOfficer)
    principalId: userPrincipalId
    principalType: userPrincipalType
  }
}

resource userOpenAi 'Microsoft.Authorization/roleAssignments@2022-04-01' = if ((!empty(userPrincipalId)) && (!empty(openAiAccountName))) {
  name: guid(openAi.id, userPrincipalId, roles.cognitiveServicesOpenAIUser)
  scope: openAi
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.cognitiveServicesOpenAIUser)
    principalId: userPrincipalId
    principalType: userPrincipalType
  }
}

// The Function App's user-assigned managed identity.
//
// User-assigned rather than system-assigned so that every role assignment (storage, Key Vault,
// Application Insights, Azure OpenAI) exists before the app is created: the Flex Consumption
// deployment container, the host's storage connection and the Key Vault references all use it
// from the first start.

@description('Name of the user-assigned identity.')
param name string

@description('Azure region.')
param location string

@description('Tags for the identity.')
param tags object = {}

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId

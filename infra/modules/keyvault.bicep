// Key Vault for the app's third-party secrets (OpenAI, Azure OpenAI key, Pinecone, Langfuse,
// Azure DevOps PAT). The Function App reads them through Key Vault references
// (`@Microsoft.KeyVault(SecretUri=...)` app settings, resolved with its managed identity).
//
// Access is Azure RBAC only (no access policies): the app's identity gets Key Vault Secrets User,
// the deploying user Key Vault Secrets Officer (see rbac.bicep).

@description('Key Vault name (3-24 letters, digits and hyphens).')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region.')
param location string

@description('Tags for the vault.')
param tags object = {}

@description('Secret name -> value. Entries with an empty value are not created.')
@secure()
param secrets object = {}

@description('Purge protection cannot be turned off again; with it, a deleted vault name stays taken for the soft-delete period.')
param enablePurgeProtection bool = false

@description('Days a deleted vault or secret can be recovered (7-90; fixed once the vault exists).')
@minValue(7)
@maxValue(90)
param softDeleteRetentionInDays int = 7

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: tenant().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: softDeleteRetentionInDays
    // The API rejects an explicit false: leave the property out unless it is turned on.
    enablePurgeProtection: enablePurgeProtection ? true : null
    // No VNet in this template: reachable publicly, every call needs an Entra ID token + role.
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: 'Allow'
    }
  }
}

resource secret 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = [for item in items(secrets): if (!empty(item.value)) {
  parent: vault
  name: item.key
  properties: {
    value: item.value
    contentType: 'text/plain'
  }
}]

output id string = vault.id
output name string = vault.name
// e.g. https://kv-abc.vault.azure.net/ (with the trailing slash)
output uri string = vault.properties.vaultUri

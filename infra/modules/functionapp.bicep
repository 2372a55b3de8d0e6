// Flex Consumption plan + the Function App (Linux, Python).
//
// Flex Consumption specifics (Microsoft docs, "Flex Consumption plan hosting"):
// - the runtime and version are set in functionAppConfig.runtime, not in app settings
//   (FUNCTIONS_WORKER_RUNTIME / FUNCTIONS_EXTENSION_VERSION are not used on this plan);
// - code is deployed as a package to a blob container, read here with the managed identity;
// - scale is per function group, up to maximumInstanceCount instances of instanceMemoryMB each;
// - blob triggers must use the Event Grid source (see eventgrid.bicep and docs/DEPLOY.md).

@description('Function App name (also the default host name prefix).')
param name string

@description('Flex Consumption plan name.')
param planName string

@description('Azure region (must offer Flex Consumption: `az functionapp list-flexconsumption-locations`).')
param location string

@description('Tags for the plan and the app (the app also gets azd-service-name).')
param tags object = {}

@description('azd service name in azure.yaml; azd finds the app by this tag.')
param serviceName string = 'api'

@description('Resource id of the user-assigned identity the app runs as.')
param identityId string

@description('Storage account that holds the deployment container.')
param storageAccountName string

@description('Blob container the Flex deployment package is written to.')
param deploymentContainerName string

@description('App settings (name -> value); built in main.bicep.')
param appSettings object

@description('Python version of the Functions runtime.')
@allowed([
  '3.11'
])
param pythonVersion string = '3.11'

@description('Memory per instance in MB.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@description('Upper bound on instances across all functions (caps cost and load on model quotas).')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Concurrent HTTP requests per instance.')
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int = 16

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    tier: 'FlexConsumption'
    name: 'FC1'
  }
  properties: {
    reserved: true
  }
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': serviceName })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Key Vault references are resolved with the user-assigned identity, not a system identity.
    keyVaultReferenceIdentity: identityId
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storage.properties.primaryEndpoints.blob}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
        triggers: {
          http: {
            perInstanceConcurrency: httpPerInstanceConcurrency
          }
        }
      }
      runtime: {
        name: 'python'
        version: pythonVersion
      }
    }
  }
}

resource settings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: functionApp
  name: 'appsettings'
  properties: appSettings
}

output id string = functionApp.id
output name string = functionApp.name
output defaultHostName string = functionApp.properties.defaultHostName
output uri string = 'https://${functionApp.properties.defaultHostName}'

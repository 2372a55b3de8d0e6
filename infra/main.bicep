// Backlog Synthesizer on Azure: everything `azd up` provisions.
//
//   resource group
//   ├─ user-assigned identity ─── the Function App runs as it (storage, Key Vault, telemetry, OpenAI)
//   ├─ storage account ────────── host storage, Flex deployment package, app containers, queues
//   ├─ Log Analytics + Application Insights (Entra ID auth only)
//   ├─ Key Vault ──────────────── third-party secrets, read through Key Vault references
//   ├─ Azure OpenAI (optional) ── one chat + one embedding deployment
//   ├─ Flex Consumption plan + Function App (Python 3.11)
//   └─ Event Grid system topic ── BlobCreated events of `transcripts` -> blob trigger webhook
//                                 (subscription added after deploy: hooks/postdeploy.sh)
//
// No connection strings: AzureWebJobsStorage is identity-based (`__blobServiceUri`,
// `__queueServiceUri`, `__tableServiceUri`, `__credential`, `__clientId`); shared-key access is
// disabled on the storage account. Parameters are documented in docs/DEPLOY.md; azd fills them
// from infra/main.parameters.json and the azd environment (`azd env set NAME value`).

targetScope = 'subscription'

// ---- environment ---------------------------------------------------------------------------------

@minLength(1)
@maxLength(64)
@description('azd environment name; seeds every resource name and the azd-env-name tag.')
param environmentName string

@minLength(1)
@description('Region for all resources; it must offer Flex Consumption.')
@metadata({
  azd: {
    type: 'location'
  }
})
param location string

@description('Object id of the deploying user (azd sets AZURE_PRINCIPAL_ID); empty grants nothing.')
param principalId string = ''

@description('Type of principalId: User for a person, ServicePrincipal for CI.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param principalType string = 'User'

@description('Resource group name; default rg-<environmentName>.')
param resourceGroupName string = ''

// ---- scale -------------------------------------------------------------------------------------

@description('Memory per Flex Consumption instance in MB.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@description('Most instances the app scales out to (all functions together).')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Concurrent HTTP requests per instance.')
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int = 16

// ---- engines -----------------------------------------------------------------------------------

@description('SYNTH_ENGINE: auto (llm when an OpenAI key or Azure OpenAI endpoint is set), offline or llm.')
@allowed([
  'auto'
  'offline'
  'llm'
])
param synthEngine string = 'auto'

@description('SYNTH_EMBEDDER: auto, minilm (packaged) or openai.')
@allowed([
  'auto'
  'minilm'
  'openai'
])
param synthEmbedder string = 'auto'

@description('SYNTH_VECTOR_STORE: auto (pinecone when a Pinecone key is set), embedded or pinecone.')
@allowed([
  'auto'
  'embedded'
  'pinecone'
])
param synthVectorStore string = 'auto'

@description('SYNTH_RUN_TOKEN_BUDGET: model tokens (prompt + completion) one run may use; a run estimated over it fails before its first model call, units past it are skipped. 0 = unlimited.')
@minValue(0)
param synthRunTokenBudget int = 0

// ---- Azure OpenAI (optional) -----------------------------------------------------------------

@description('Create an Azure OpenAI account with a chat and an embedding deployment.')
param enableAzureOpenAI bool = false

@description('Region of the Azure OpenAI account; default: location.')
param azureOpenAILocation string = ''

param chatModelName string = 'gpt-4o'
param chatModelVersion string = '2024-11-20'
param chatDeploymentName string = 'gpt-4o'

@allowed([
  'Standard'
  'GlobalStandard'
  'DataZoneStandard'
])
param chatDeploymentSku string = 'GlobalStandard'

@description('Chat deployment capacity in thousands of tokens per minute.')
@minValue(1)
param chatDeploymentCapacity int = 30

param embeddingModelName string = 'text-embedding-3-small'
param embeddingModelVersion string = '1'
param embeddingDeploymentName string = 'text-embedding-3-small'

@allowed([
  'Standard'
  'GlobalStandard'
  'DataZoneStandard'
])
param embeddingDeploymentSku string = 'Standard'

@description('Embedding deployment capacity in thousands of tokens per minute.')
@minValue(1)
param embeddingDeploymentCapacity int = 30

@description('OPENAI_API_VERSION for Azure OpenAI calls.')
param openAiApiVersion string = '2024-10-21'

@description('AZURE_OPENAI_ENDPOINT of an existing Azure OpenAI resource (ignored when enableAzureOpenAI).')
param azureOpenAiEndpoint string = ''

@description('OPENAI_BASE_URL for an OpenAI-compatible endpoint; empty: api.openai.com.')
param openAiBaseUrl string = ''

// ---- third-party services ----------------------------------------------------------------------

param pineconeIndex string = 'brd-upload'
param pineconeHost string = ''
param langfusePublicKey string = ''
param langfuseHost string = ''
param azureDevOpsOrgUrl string = ''
param azureDevOpsProject string = ''

@description('AZURE_DEVOPS_PROCESS: the project\'s process (its backlog type names); empty: detected.')
@allowed([
  ''
  'auto'
  'agile'
  'scrum'
  'cmmi'
  'basic'
])
param azureDevOpsProcess string = ''

@description('SYNTH_SYNC_SCHEDULE (NCRONTAB, e.g. 0 */15 * * * *): the sync timer keeps the index up to date with Azure DevOps; empty: no sync timer.')
param syncSchedule string = ''

@description('SYNTH_SYNC_PROJECT: the index namespace the sync timer brings up to date; empty: AZURE_DEVOPS_PROJECT.')
param syncProject string = ''

// ---- secrets: stored in Key Vault, never in app settings ---------------------------------------

@secure()
param openAiApiKey string = ''

@secure()
param azureOpenAiApiKey string = ''

@secure()
param pineconeApiKey string = ''

@secure()
param langfuseSecretKey string = ''

@secure()
param azureDevOpsPat string = ''

// ---- hardening switches --------------------------------------------------------------------------

@description('Key Vault purge protection (irreversible; blocks reusing the vault name after azd down for the retention period).')
param enablePurgeProtection bool = false

// ---- names ---------------------------------------------------------------------------------------

var abbrs = loadJsonContent('./abbreviations.json')
var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var tags = {
  'azd-env-name': environmentName
}
var functionAppName = '${abbrs.webSitesFunctions}${resourceToken}'
var deploymentContainerName = 'app-package-${resourceToken}'
var openAiAccountName = '${abbrs.cognitiveServicesAccounts}${resourceToken}'

// Containers the app uses: the trigger reads `transcripts`; shared/storage/azure_blob.py writes
// the others (it would also create them on first use).
var appContainerNames = [
  'transcripts'
  'runs'
  'uploads'
  'index'
  'ingestion'
  'eval'
]

// shared/bus: the four pipeline queues and the `-poison` queue the host moves a message to after
// maxDequeueCount (host.json) failed attempts. Created here so that dashboards and alerts on
// them work before the first failure.
var queueNames = [
  'synth-segment'
  'synth-generate'
  'synth-tag'
  'synth-finalize'
  'synth-segment-poison'
  'synth-generate-poison'
  'synth-tag-poison'
  'synth-finalize-poison'
]

// Names of the Key Vault secrets; a secret given empty is not stored (see keyvault.bicep).
var secretNames = {
  openAiApiKey: 'openai-api-key'
  azureOpenAiApiKey: 'azure-openai-api-key'
  pineconeApiKey: 'pinecone-api-key'
  langfuseSecretKey: 'langfuse-secret-key'
  azureDevOpsPat: 'azure-devops-pat'
}

resource rg 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: !empty(resourceGroupName) ? resourceGroupName : '${abbrs.resourcesResourceGroups}${environmentName}'
  location: location
  tags: tags
}

module identity 'modules/identity.bicep' = {
  name: 'identity'
  scope: rg
  params: {
    name: '${abbrs.managedIdentityUserAssignedIdentities}${resourceToken}'
    location: location
    tags: tags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  scope: rg
  params: {
    name: '${abbrs.storageStorageAccounts}${resourceToken}'
    location: location
    tags: tags
    containerNames: concat([
      deploymentContainerName
    ], appContainerNames)
    queueNames: queueNames
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  scope: rg
  params: {
    logAnalyticsName: '${abbrs.operationalInsightsWorkspaces}${resourceToken}'
    applicationInsightsName: '${abbrs.insightsComponents}${resourceToken}'
    location: location
    tags: tags
  }
}

module keyVault 'modules/keyvault.bicep' = {
  name: 'keyvault'
  scope: rg
  params: {
    name: '${abbrs.keyVaultVaults}${resourceToken}'
    location: location
    tags: tags
    enablePurgeProtection: enablePurgeProtection
    secrets: {
      '${secretNames.openAiApiKey}': openAiApiKey
      '${secretNames.azureOpenAiApiKey}': azureOpenAiApiKey
      '${secretNames.pineconeApiKey}': pineconeApiKey
      '${secretNames.langfuseSecretKey}': langfuseSecretKey
      '${secretNames.azureDevOpsPat}': azureDevOpsPat
    }
  }
}

module openAi 'modules/openai.bicep' = if (enableAzureOpenAI) {
  name: 'openai'
  scope: rg
  params: {
    name: openAiAccountName
    location: !empty(azureOpenAILocation) ? azureOpenAILocation : location
    tags: tags
    chatModelName: chatModelName
    chatModelVersion: chatModelVersion
    chatDeploymentName: chatDeploymentName
    chatDeploymentSku: chatDeploymentSku
    chatDeploymentCapacity: chatDeploymentCapacity
    embeddingModelName: embeddingModelName
    embeddingModelVersion: embeddingModelVersion
    embeddingDeploymentName: embeddingDeploymentName
    embeddingDeploymentSku: embeddingDeploymentSku
    embeddingDeploymentCapacity: embeddingDeploymentCapacity
  }
}

module rbac 'modules/rbac.bicep' = {
  name: 'rbac'
  scope: rg
  params: {
    appPrincipalId: identity.outputs.principalId
    userPrincipalId: principalId
    userPrincipalType: principalType
    storageAccountName: storage.outputs.name
    keyVaultName: keyVault.outputs.name
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    openAiAccountName: enableAzureOpenAI ? openAiAccountName : ''
  }
  dependsOn: [
    openAi
  ]
}

// ---- app settings --------------------------------------------------------------------------------
// Every setting the code reads is either here or listed as optional in docs/DEPLOY.md
// (tests/unit/test_settings_documented.py checks it). Secrets are Key Vault references, added
// only when the secret was given, so an unset secret stays unset in the app too.

var secretsUri = '${keyVault.outputs.uri}secrets/'

var baseSettings = {
  // Host storage and the app's own blob/queue clients, with the managed identity.
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identity.outputs.clientId
  AzureWebJobsStorage__blobServiceUri: storage.outputs.blobEndpoint
  AzureWebJobsStorage__queueServiceUri: storage.outputs.queueEndpoint
  AzureWebJobsStorage__tableServiceUri: storage.outputs.tableEndpoint
  // DefaultAzureCredential picks the user-assigned identity from AZURE_CLIENT_ID.
  AZURE_CLIENT_ID: identity.outputs.clientId
  APPLICATIONINSIGHTS_CONNECTION_STRING: monitoring.outputs.applicationInsightsConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'Authorization=AAD;ClientId=${identity.outputs.clientId}'
  // In Azure the blob trigger listens to Event Grid (the polling source is local only).
  SYNTH_BLOB_TRIGGER_SOURCE: 'EventGrid'
  SYNTH_STORAGE_BACKEND: 'azure'
  SYNTH_ENGINE: synthEngine
  SYNTH_EMBEDDER: synthEmbedder
  SYNTH_VECTOR_STORE: synthVectorStore
  SYNTH_RUN_TOKEN_BUDGET: string(synthRunTokenBudget)
  OPENAI_API_VERSION: openAiApiVersion
  PINECONE_INDEX: pineconeIndex
}

var optionalSettings = union(empty(openAiBaseUrl) ? {} : {
  OPENAI_BASE_URL: openAiBaseUrl
}, empty(pineconeHost) ? {} : {
  PINECONE_HOST: pineconeHost
}, empty(langfusePublicKey) ? {} : {
  LANGFUSE_PUBLIC_KEY: langfusePublicKey
}, empty(langfuseHost) ? {} : {
  LANGFUSE_HOST: langfuseHost
}, empty(azureDevOpsOrgUrl) ? {} : {
  AZURE_DEVOPS_ORG_URL: azureDevOpsOrgUrl
}, empty(azureDevOpsProject) ? {} : {
  AZURE_DEVOPS_PROJECT: azureDevOpsProject
}, empty(azureDevOpsProcess) ? {} : {
  AZURE_DEVOPS_PROCESS: azureDevOpsProcess
}, empty(syncSchedule) ? {} : {
  SYNTH_SYNC_SCHEDULE: syncSchedule
}, empty(syncProject) ? {} : {
  SYNTH_SYNC_PROJECT: syncProject
})

var secretSettings = union(empty(openAiApiKey) ? {} : {
  OPENAI_API_KEY: '@Microsoft.KeyVault(SecretUri=${secretsUri}${secretNames.openAiApiKey}/)'
}, empty(azureOpenAiApiKey) ? {} : {
  AZURE_OPENAI_API_KEY: '@Microsoft.KeyVault(SecretUri=${secretsUri}${secretNames.azureOpenAiApiKey}/)'
}, empty(pineconeApiKey) ? {} : {
  PINECONE_API_KEY: '@Microsoft.KeyVault(SecretUri=${secretsUri}${secretNames.pineconeApiKey}/)'
}, empty(langfuseSecretKey) ? {} : {
  LANGFUSE_SECRET_KEY: '@Microsoft.KeyVault(SecretUri=${secretsUri}${secretNames.langfuseSecretKey}/)'
}, empty(azureDevOpsPat) ? {} : {
  AZURE_DEVOPS_PAT: '@Microsoft.KeyVault(SecretUri=${secretsUri}${secretNames.azureDevOpsPat}/)'
})

// With the Azure OpenAI account: its endpoint (Entra ID auth, no key) and the deployment names
// as the models every agent calls. Without it: an existing endpoint, if one was given.
var openAiSettings = enableAzureOpenAI ? {
  AZURE_OPENAI_ENDPOINT: openAi.outputs.endpoint
  AZURE_OPENAI_CHAT_DEPLOYMENT: chatDeploymentName
  AZURE_OPENAI_EMBEDDING_DEPLOYMENT: embeddingDeploymentName
  SYNTH_PIPELINE__SEGMENTATION__MODEL: chatDeploymentName
  SYNTH_PIPELINE__GENERATION__MODEL: chatDeploymentName
  SYNTH_PIPELINE__TAGGING__MODEL: chatDeploymentName
  SYNTH_PIPELINE__EMBEDDING__MODEL: embeddingDeploymentName
  // The shared rate limiter (shared/llm/limiter.py) at the deployments' quota: capacity x 1,000
  // tokens per minute and, by Microsoft's ratio for most models, 6 requests per 1,000 TPM.
  SYNTH_MODEL_TPM: string(chatDeploymentCapacity * 1000)
  SYNTH_MODEL_RPM: string(chatDeploymentCapacity * 6)
  SYNTH_EMBEDDING_TPM: string(embeddingDeploymentCapacity * 1000)
  SYNTH_EMBEDDING_RPM: string(embeddingDeploymentCapacity * 6)
} : empty(azureOpenAiEndpoint) ? {} : {
  AZURE_OPENAI_ENDPOINT: azureOpenAiEndpoint
}

// Overrides kept in the repo (e.g. SYNTH_PIPELINE__THRESHOLDS__NEW_BELOW): infra/app-settings.json,
// string values only. Bicep owns the app settings: a setting added in the portal or with
// `az functionapp config appsettings set` is removed by the next `azd provision`.
var extraSettings = loadJsonContent('./app-settings.json')

var appSettings = union(baseSettings, optionalSettings, secretSettings, openAiSettings, extraSettings)

module functionApp 'modules/functionapp.bicep' = {
  name: 'functionapp'
  scope: rg
  params: {
    name: functionAppName
    planName: '${abbrs.webServerFarms}${resourceToken}'
    location: location
    tags: tags
    identityId: identity.outputs.id
    storageAccountName: storage.outputs.name
    deploymentContainerName: deploymentContainerName
    appSettings: appSettings
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    httpPerInstanceConcurrency: httpPerInstanceConcurrency
  }
  // The identity must hold its roles before the app starts: the deployment package, the host
  // storage connection and the Key Vault references are all read with it.
  dependsOn: [
    rbac
  ]
}

module eventGrid 'modules/eventgrid.bicep' = {
  name: 'eventgrid'
  scope: rg
  params: {
    name: '${abbrs.eventGridSystemTopics}${resourceToken}'
    location: location
    tags: tags
    storageAccountId: storage.outputs.id
  }
}

// ---- outputs: azd stores them in .azure/<env>/.env; hooks/postdeploy.sh and the docs use them ---

output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output SERVICE_API_NAME string = functionApp.outputs.name
output SERVICE_API_URI string = functionApp.outputs.uri
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
output AZURE_STORAGE_BLOB_ENDPOINT string = storage.outputs.blobEndpoint
output AZURE_STORAGE_QUEUE_ENDPOINT string = storage.outputs.queueEndpoint
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
output AZURE_KEY_VAULT_URI string = keyVault.outputs.uri
output APPLICATIONINSIGHTS_NAME string = monitoring.outputs.applicationInsightsName
output AZURE_LOG_ANALYTICS_WORKSPACE_NAME string = monitoring.outputs.logAnalyticsWorkspaceName
output AZURE_EVENTGRID_SYSTEM_TOPIC_NAME string = eventGrid.outputs.name
// The Azure OpenAI endpoint the app uses (empty without one), for running the CLI against it.
output AZURE_OPENAI_ENDPOINT string = enableAzureOpenAI ? openAi.outputs.endpoint : azureOpenAiEndpoint

"""The Azure infrastructure (infra/, azure.yaml), checked offline.

Bicep cannot be compiled on these machines, so every ``.bicep`` file is parsed with pycep-parser
(the parser checkov itself uses, same version), its resources are checked against what the app
needs (Flex Consumption, identity-based storage, Key Vault references, the queues and containers
the code uses, the roles), the postdeploy hook runs against a stand-in ``az``, and checkov's Bicep
policies must pass with only the skips justified in ``infra/.checkov.yaml``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

try:
    import pycep
except ImportError:  # pragma: no cover - `make setup` installs it (requirements-dev.txt)
    if os.environ.get("CI"):
        raise
    pytest.skip("pycep-parser is not installed: run `make setup`", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"
MODULES = INFRA / "modules"
BICEP_FILES = sorted(INFRA.rglob("*.bicep"))


@cache
def parser() -> Any:
    return pycep.BicepParser()  # building the grammar takes about half a second


@cache
def parsed(path: Path) -> dict[str, Any]:
    return parser().parse(file_path=path)


def resources(path: Path) -> dict[str, dict[str, Any]]:
    return parsed(path).get("resources", {})


def config(resource: dict[str, Any]) -> dict[str, Any]:
    """A resource's body, looking through a deploy condition or a loop."""
    body = resource["config"]
    while "config" in body and ("condition" in body or "loop_type" in body):
        body = body["config"]
    return body


def all_resources() -> list[tuple[Path, str, dict[str, Any]]]:
    return [(p, name, r) for p in BICEP_FILES for name, r in resources(p).items()]


def of_type(type_: str) -> list[dict[str, Any]]:
    return [r for _, _, r in all_resources() if r["type"] == type_ and not r["existing"]]


def variable(path: Path, name: str) -> Any:
    return parsed(path)["variables"][name]["value"]


def unquote(key: str) -> str:
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] == "'" else key


def object_keys(node: Any, variables: dict[str, Any], base: Path) -> dict[str, Any]:
    """Keys (and values) of the object a Bicep expression can produce: unions, conditionals,
    variable references and loadJsonContent() are followed; every branch counts."""
    if isinstance(node, str):
        if node in variables:
            return object_keys(variables[node]["value"], variables, base)
        return {}
    if not isinstance(node, dict):
        return {}
    if set(node) == {"function"}:
        fn = node["function"]
        if fn["type"] == "union":
            out: dict[str, Any] = {}
            for arg in fn["parameters"].values():
                out.update(object_keys(arg, variables, base))
            return out
        if fn["type"] == "load_json_content":
            return json.loads((base / fn["parameters"]["file_path"]).read_text())
        return {}
    if set(node) == {"operator"}:
        op = node["operator"]
        if op["type"] == "conditional":
            out = {}
            for branch in ("true_value", "false_value"):
                out.update(object_keys(op["operands"][branch], variables, base))
            return out
        return {}
    return {unquote(k): v for k, v in node.items()}


def app_settings() -> dict[str, Any]:
    """Every app setting main.bicep can give the Function App (name -> Bicep value)."""
    main = INFRA / "main.bicep"
    return object_keys("appSettings", parsed(main)["variables"], INFRA)


# ------------------------------------------------------------------------------------------------
# parsing


def test_infra_has_the_expected_files() -> None:
    names = {p.relative_to(INFRA).as_posix() for p in BICEP_FILES}
    assert {
        "main.bicep",
        "modules/storage.bicep",
        "modules/functionapp.bicep",
        "modules/monitoring.bicep",
        "modules/keyvault.bicep",
        "modules/rbac.bicep",
        "modules/openai.bicep",
        "modules/eventgrid.bicep",
        "modules/blob-event-subscription.bicep",
    } <= names
    for extra in ("main.parameters.json", "abbreviations.json", "app-settings.json"):
        json.loads((INFRA / extra).read_text())


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda p: p.relative_to(INFRA).as_posix())
def test_bicep_file_parses(path: Path) -> None:
    result = parsed(path)
    assert result.get("resources") or result.get("modules"), f"{path} declares nothing"


def test_main_is_subscription_scoped_and_wires_every_module() -> None:
    main = parsed(INFRA / "main.bicep")
    assert main["globals"]["scope"]["value"] == "subscription"
    used = {m["detail"]["path"] for m in main["modules"].values()}
    for module in MODULES.glob("*.bicep"):
        if module.name == "blob-event-subscription.bicep":
            continue  # deployed by infra/hooks/postdeploy.sh after the code
        assert f"modules/{module.name}" in used, f"{module.name} is not used by main.bicep"
    for module in used:
        assert (INFRA / module).is_file(), module


def test_parameters_file_matches_main() -> None:
    params = parsed(INFRA / "main.bicep")["parameters"]
    given = json.loads((INFRA / "main.parameters.json").read_text())["parameters"]
    assert set(given) <= set(params), f"unknown parameters: {set(given) - set(params)}"
    without_default = {name for name, p in params.items() if "default" not in p}
    assert without_default <= set(given), "azd would have no value for these"
    assert given["environmentName"]["value"] == "${AZURE_ENV_NAME}"
    assert given["location"]["value"] == "${AZURE_LOCATION}"
    assert given["principalId"]["value"] == "${AZURE_PRINCIPAL_ID}"
    for name, p in params.items():
        if any(d["type"] == "secure" for d in p["decorators"]):
            assert p.get("default") == "", f"secure parameter {name} needs an empty default"


def test_every_azd_variable_is_documented() -> None:
    text = (INFRA / "main.parameters.json").read_text()
    variables = set(re.findall(r"\$\{([A-Z_]+)", text))
    docs = (REPO / "docs" / "DEPLOY.md").read_text()
    undocumented = sorted(v for v in variables if f"`{v}`" not in docs)
    assert not undocumented, f"azd variables missing from docs/DEPLOY.md: {undocumented}"


# ------------------------------------------------------------------------------------------------
# resources


def test_expected_resource_types_are_declared() -> None:
    declared = {r["type"] for _, _, r in all_resources() if not r["existing"]}
    assert {
        "Microsoft.Resources/resourceGroups",
        "Microsoft.ManagedIdentity/userAssignedIdentities",
        "Microsoft.Storage/storageAccounts",
        "Microsoft.Storage/storageAccounts/blobServices/containers",
        "Microsoft.Storage/storageAccounts/queueServices/queues",
        "Microsoft.OperationalInsights/workspaces",
        "Microsoft.Insights/components",
        "Microsoft.KeyVault/vaults",
        "Microsoft.KeyVault/vaults/secrets",
        "Microsoft.CognitiveServices/accounts",
        "Microsoft.CognitiveServices/accounts/deployments",
        "Microsoft.Web/serverfarms",
        "Microsoft.Web/sites",
        "Microsoft.Web/sites/config",
        "Microsoft.EventGrid/systemTopics",
        "Microsoft.EventGrid/systemTopics/eventSubscriptions",
        "Microsoft.Authorization/roleAssignments",
    } <= declared


def test_function_app_runs_python_311_on_flex_consumption_with_its_identity() -> None:
    (plan,) = of_type("Microsoft.Web/serverfarms")
    assert config(plan)["sku"] == {"tier": "FlexConsumption", "name": "FC1"}
    assert config(plan)["properties"]["reserved"] is True

    (site,) = of_type("Microsoft.Web/sites")
    body = config(site)
    assert body["kind"] == "functionapp,linux"
    assert body["identity"]["type"] == "UserAssigned"
    props = body["properties"]
    assert props["httpsOnly"] is True
    assert props["keyVaultReferenceIdentity"] == "identityId"
    fac = props["functionAppConfig"]
    assert fac["runtime"] == {"name": "python", "version": "pythonVersion"}
    params = parsed(MODULES / "functionapp.bicep")["parameters"]
    assert params["pythonVersion"]["default"] == "3.11"
    assert fac["deployment"]["storage"]["type"] == "blobContainer"
    assert fac["deployment"]["storage"]["authentication"]["type"] == "UserAssignedIdentity"
    assert {"instanceMemoryMB", "maximumInstanceCount"} <= set(fac["scaleAndConcurrency"])

    (app_config,) = of_type("Microsoft.Web/sites/config")
    assert config(app_config)["name"] == "appsettings"
    assert config(app_config)["properties"] == "appSettings"
    module = parsed(INFRA / "main.bicep")["modules"]["functionApp"]
    assert module["config"]["params"]["appSettings"] == "appSettings"


def test_storage_is_identity_only_tls12_and_private_blobs() -> None:
    (account,) = of_type("Microsoft.Storage/storageAccounts")
    props = config(account)["properties"]
    assert props["allowSharedKeyAccess"] is False
    assert props["allowBlobPublicAccess"] is False
    assert props["minimumTlsVersion"] == "TLS1_2"
    assert props["supportsHttpsTrafficOnly"] is True
    (containers,) = of_type("Microsoft.Storage/storageAccounts/blobServices/containers")
    assert config(containers)["properties"]["publicAccess"] == "None"


def test_no_connection_string_or_account_key_anywhere() -> None:
    text = "\n".join(p.read_text() for p in BICEP_FILES)
    for needle in ("AccountKey=", "DefaultEndpointsProtocol", "SharedAccessSignature"):
        assert needle not in text
    # listKeys() appears once: the Functions host's blobs_extension key for Event Grid.
    calls = re.findall(r"listKeys\(('[^)]*)\)", text)
    assert calls == ["'${functionApp.id}/host/default', '2024-04-01'"]
    assert "AzureWebJobsStorage" not in app_settings()


def test_app_settings_use_identity_based_storage() -> None:
    settings = app_settings()
    assert settings["AzureWebJobsStorage__credential"] == "managedidentity"
    for key in ("blobServiceUri", "queueServiceUri", "tableServiceUri", "clientId"):
        assert f"AzureWebJobsStorage__{key}" in settings
    assert settings["SYNTH_BLOB_TRIGGER_SOURCE"] == "EventGrid"
    assert settings["SYNTH_STORAGE_BACKEND"] == "azure"
    assert "APPLICATIONINSIGHTS_CONNECTION_STRING" in settings
    assert str(settings["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"]).startswith(
        "Authorization=AAD;ClientId="
    )
    # Flex Consumption takes the runtime from functionAppConfig and rejects these settings.
    for legacy in ("FUNCTIONS_WORKER_RUNTIME", "FUNCTIONS_EXTENSION_VERSION"):
        assert legacy not in settings
    assert all(isinstance(v, str) for v in json.loads((INFRA / "app-settings.json").read_text()))


def test_secret_settings_are_key_vault_references() -> None:
    from pydantic import SecretStr

    from shared.settings import Settings

    main = INFRA / "main.bicep"
    secret_names = variable(main, "secretNames")  # parameter -> Key Vault secret name
    passed = parsed(main)["modules"]["keyVault"]["config"]["params"]["secrets"]
    assert {unquote(k) for k in passed} == {f"${{secretNames.{k}}}" for k in secret_names}

    reference = re.compile(
        r"@Microsoft\.KeyVault\(SecretUri=\$\{secretsUri\}\$\{secretNames\.(\w+)\}/\)"
    )
    settings = app_settings()
    referenced = {}
    for name, value in settings.items():
        if isinstance(value, str) and value.startswith("@Microsoft.KeyVault"):
            match = reference.fullmatch(value)
            assert match, f"{name}: not a versionless SecretUri reference: {value}"
            referenced[name] = match.group(1)
    assert set(referenced.values()) == set(secret_names), "every stored secret is referenced"

    # every secret the code declares (SecretStr) that Azure sets is a Key Vault reference
    for field in Settings.model_fields.values():
        if SecretStr not in getattr(field.annotation, "__args__", (field.annotation,)):
            continue
        alias = field.validation_alias
        for env_name in getattr(alias, "choices", [alias] if alias else []):
            if env_name in settings:
                assert env_name in referenced, f"{env_name} is a secret but not a reference"
    assert "AZURE_DEVOPS_PAT" in referenced


def test_key_vault_is_rbac_only_with_soft_delete() -> None:
    (vault,) = of_type("Microsoft.KeyVault/vaults")
    props = config(vault)["properties"]
    assert props["enableRbacAuthorization"] is True
    assert props["enableSoftDelete"] is True


def test_queues_and_containers_cover_what_the_code_uses() -> None:
    from shared import layout
    from shared.bus import PIPELINE_QUEUES, poison_queue

    main = INFRA / "main.bicep"
    queues = set(variable(main, "queueNames"))
    assert set(PIPELINE_QUEUES) | {poison_queue(q) for q in PIPELINE_QUEUES} <= queues

    containers = set(variable(main, "appContainerNames"))
    used = {
        layout.run_prefix("r").split("/")[0],
        layout.upload("r", "txt").split("/")[0],
        layout.index_blob("ns").split("/")[0],
        blob_trigger()["path"].split("/")[0],
    }
    assert used <= containers
    # The Flex deployment container is created with the others.
    args = parsed(main)["modules"]["storage"]["config"]["params"]["containerNames"]
    assert "deploymentContainerName" in json.dumps(args)


@cache
def blob_trigger() -> dict[str, Any]:
    """The blob trigger binding of function_app.py, as the Functions host indexes it."""
    import function_app

    app = function_app.app
    app.functions_bindings = None  # get_functions() is one-shot otherwise
    for fn in app.get_functions():
        trigger = fn.get_trigger()
        if trigger.get_binding_name() == "blobTrigger":
            return {"function": fn.get_function_name(), **trigger.get_dict_repr()}
    raise AssertionError("function_app.py has no blob trigger")


def test_event_subscription_targets_the_blob_trigger() -> None:
    trigger = blob_trigger()
    sub_file = MODULES / "blob-event-subscription.bicep"
    params = parsed(sub_file)["parameters"]
    assert params["functionName"]["default"] == trigger["function"]
    assert params["containerName"]["default"] == trigger["path"].split("/")[0]
    assert trigger["connection"] == "AzureWebJobsStorage"
    (sub,) = of_type("Microsoft.EventGrid/systemTopics/eventSubscriptions")
    props = config(sub)["properties"]
    assert props["destination"]["endpointType"] == "WebHook"
    assert "/runtime/webhooks/blobs" in sub_file.read_text()
    assert props["filter"]["includedEventTypes"] == ["Microsoft.Storage.BlobCreated"]
    (topic,) = of_type("Microsoft.EventGrid/systemTopics")
    assert config(topic)["properties"]["topicType"] == "Microsoft.Storage.StorageAccounts"


def test_role_assignments_grant_what_the_app_needs() -> None:
    rbac = MODULES / "rbac.bicep"
    assert variable(rbac, "roles") == {
        "storageBlobDataOwner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
        "storageBlobDataContributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
        "storageQueueDataContributor": "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
        "storageTableDataContributor": "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3",
        "keyVaultSecretsUser": "4633458b-17de-408a-b874-0445c86b69e6",
        "keyVaultSecretsOfficer": "b86a8fe4-44ce-4948-aee5-eccb2c155cd7",
        "monitoringMetricsPublisher": "3913510d-42f4-4e42-8a64-420c390055eb",
        "cognitiveServicesOpenAIUser": "5e0bd9bd-7b93-4f28-af87-19fc36ad61bd",
    }
    granted: dict[str, set[str]] = {}
    for r in resources(rbac).values():
        if r["type"] != "Microsoft.Authorization/roleAssignments":
            continue
        props = config(r)["properties"]
        # explicit principalType avoids failures while a new identity replicates
        assert "principalType" in props
        if "loop_type" in r["config"]:
            names = variable(rbac, r["config"]["loop_type"]["detail"]["array_name"])
            roles = {n["operator"]["operands"]["operand_2"] for n in names}
        else:
            roles = set(
                re.findall(r'"operand_1": "roles", "operand_2": "(\w+)"', json.dumps(props))
            )
        granted.setdefault(props["principalId"], set()).update(roles)
    assert granted["appPrincipalId"] == {
        "storageBlobDataOwner",  # host storage, blob trigger, deployment package, app blobs
        "storageQueueDataContributor",  # queue triggers, the bus, the blob trigger's poison queue
        "storageTableDataContributor",  # the host's diagnostic events
        "keyVaultSecretsUser",
        "monitoringMetricsPublisher",
        "cognitiveServicesOpenAIUser",
    }
    assert granted["userPrincipalId"] == {
        "storageBlobDataContributor",
        "storageQueueDataContributor",
        "keyVaultSecretsOfficer",
        "cognitiveServicesOpenAIUser",
    }


def test_optional_azure_openai_has_chat_and_embedding_deployments() -> None:
    main = parsed(INFRA / "main.bicep")
    assert main["parameters"]["enableAzureOpenAI"]["default"] is False
    assert "condition" in main["modules"]["openAi"]["config"]
    (account,) = of_type("Microsoft.CognitiveServices/accounts")
    assert config(account)["kind"] == "OpenAI"
    assert config(account)["properties"]["disableLocalAuth"] is True
    names = {config(d)["name"] for d in of_type("Microsoft.CognitiveServices/accounts/deployments")}
    assert names == {"chatDeploymentName", "embeddingDeploymentName"}


def test_azure_openai_turns_the_shared_rate_limiter_on_at_the_deployments_quota() -> None:
    """Capacity c gives c x 1,000 TPM and 6 RPM per 1,000 TPM: the limiter's settings follow."""
    settings = app_settings()

    def product(name: str) -> tuple[str, int]:
        value = settings[name]["function"]
        assert value["type"] == "string"
        operands = value["parameters"]["value_to_convert"]["operator"]["operands"]
        return operands["operand_1"], operands["operand_2"]

    assert product("SYNTH_MODEL_TPM") == ("chatDeploymentCapacity", 1000)
    assert product("SYNTH_MODEL_RPM") == ("chatDeploymentCapacity", 6)
    assert product("SYNTH_EMBEDDING_TPM") == ("embeddingDeploymentCapacity", 1000)
    assert product("SYNTH_EMBEDDING_RPM") == ("embeddingDeploymentCapacity", 6)


# ------------------------------------------------------------------------------------------------
# azure.yaml and the postdeploy hook


def test_azure_yaml_deploys_the_repo_as_a_python_function_app() -> None:
    azd = yaml.safe_load((REPO / "azure.yaml").read_text())
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", azd["name"])
    assert azd["infra"] == {"provider": "bicep", "path": "infra", "module": "main"}
    (service_name,) = azd["services"]
    service = azd["services"][service_name]
    assert service["host"] == "function"
    assert service["language"] == "python"
    assert (REPO / service["project"] / "function_app.py").is_file()
    # azd finds the app by its azd-service-name tag
    params = parsed(MODULES / "functionapp.bicep")["parameters"]
    assert params["serviceName"]["default"] == service_name
    hook = azd["hooks"]["postdeploy"]
    script = REPO / hook["run"]
    assert script.is_file() and os.access(script, os.X_OK)
    assert hook["shell"] == "sh"


HOOK_ENV = {
    "AZURE_SUBSCRIPTION_ID": "00000000-0000-0000-0000-000000000000",
    "AZURE_RESOURCE_GROUP": "rg-test",
    "AZURE_FUNCTION_APP_NAME": "func-test",
    "AZURE_EVENTGRID_SYSTEM_TOPIC_NAME": "egst-test",
}


def run_hook(tmp_path: Path, env: dict[str, str], az_exit: int = 0) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "az.log"
    fake = bin_dir / "az"
    fake.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{log}"\necho --- >> "{log}"\nexit {az_exit}\n'
    )
    fake.chmod(0o755)
    full_env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "BLOB_EVENT_SUBSCRIPTION_DELAY_S": "0",
        **env,
    }
    return subprocess.run(
        ["sh", str(INFRA / "hooks" / "postdeploy.sh")],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_postdeploy_hook_deploys_the_event_subscription(tmp_path: Path) -> None:
    result = run_hook(tmp_path, HOOK_ENV)
    assert result.returncode == 0, result.stderr
    args = (tmp_path / "az.log").read_text().split("\n")
    assert args[:3] == ["deployment", "group", "create"]
    template = Path(args[args.index("--template-file") + 1])
    assert template.resolve() == (MODULES / "blob-event-subscription.bicep").resolve()
    assert args[args.index("--resource-group") + 1] == "rg-test"
    assert args[args.index("--subscription") + 1] == HOOK_ENV["AZURE_SUBSCRIPTION_ID"]
    assert "systemTopicName=egst-test" in args
    assert "functionAppName=func-test" in args
    # every parameter the hook passes exists in the template
    declared = set(parsed(template)["parameters"])
    passed = {a.split("=", 1)[0] for a in args if re.fullmatch(r"[A-Za-z]+=.*", a)}
    assert passed <= declared


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_postdeploy_hook_retries_then_fails_and_can_be_skipped(tmp_path: Path) -> None:
    failed = run_hook(tmp_path, {**HOOK_ENV, "BLOB_EVENT_SUBSCRIPTION_ATTEMPTS": "2"}, az_exit=1)
    assert failed.returncode == 1
    assert (tmp_path / "az.log").read_text().count("---") == 2
    assert "source=EventGrid" in failed.stderr

    missing = run_hook(tmp_path, {"AZURE_RESOURCE_GROUP": "rg-test"})
    assert missing.returncode == 2
    assert "AZURE_FUNCTION_APP_NAME" in missing.stderr

    skipped = run_hook(tmp_path, {"BLOB_EVENT_SUBSCRIPTION": "false"})
    assert skipped.returncode == 0


# ------------------------------------------------------------------------------------------------
# checkov


def checkov_executable() -> str | None:
    """checkov lives in its own venv (.venv-tools/, made by `make setup`): its pins conflict
    with pytest's. CHECKOV overrides; the test venv and PATH are the fallbacks."""
    candidates = [
        os.environ.get("CHECKOV", ""),
        str(REPO / ".venv-tools" / "bin" / "checkov"),
        str(Path(sys.executable).parent / "checkov"),
        shutil.which("checkov") or "",
    ]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def test_checkov_skips_are_justified() -> None:
    lines = (INFRA / ".checkov.yaml").read_text().splitlines()
    cfg = yaml.safe_load("\n".join(lines))
    assert cfg["framework"] == ["bicep"]
    assert cfg["skip-download"] is True
    skips = cfg["skip-check"]
    assert skips and len(skips) == len(set(skips))
    for i, line in enumerate(lines):
        if re.match(r"\s*-\s*CKV", line):
            previous = lines[i - 1].strip()
            assert previous.startswith("#") and len(previous) > 20, f"no reason beside {line}"


def test_pycep_matches_the_one_checkov_uses() -> None:
    """A file that parses here must parse for checkov too: same pycep-parser version."""
    from importlib.metadata import version

    tools = sorted(
        (REPO / ".venv-tools").glob("lib/python*/site-packages/pycep_parser-*.dist-info")
    )
    if not tools:
        pytest.skip("no .venv-tools/ (made by `make setup`)")
    assert tools[-1].name == f"pycep_parser-{version('pycep-parser')}.dist-info"


def test_checkov_passes() -> None:
    exe = checkov_executable()
    if exe is None:
        message = "checkov not found: `make setup` installs it into .venv-tools/"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    result = subprocess.run(
        [
            *(exe, "--config-file", str(INFRA / ".checkov.yaml")),
            *("--framework", "bicep", "--skip-download", "-d", str(INFRA), "-o", "json"),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
    )
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"checkov exited {result.returncode}: {result.stderr[-2000:]}")
    reports = report if isinstance(report, list) else [report]
    (bicep,) = [r for r in reports if r.get("check_type") == "bicep"]
    failed = [
        f"{c['check_id']} {c['check_name']} - {c['resource']} ({c['file_path']})"
        for c in bicep["results"]["failed_checks"]
    ]
    assert not failed, "checkov failures:\n" + "\n".join(failed)
    summary = bicep["summary"]
    assert summary["parsing_errors"] == 0
    assert summary["passed"] > 0 and summary["resource_count"] > 0
    checked = {c["file_path"].lstrip("/") for c in bicep["results"]["passed_checks"]}
    for name in ("modules/storage.bicep", "modules/functionapp.bicep", "modules/keyvault.bicep"):
        assert name in checked, f"checkov checked nothing in {name}"
    assert result.returncode == 0, result.stderr[-2000:]

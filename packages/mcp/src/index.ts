export { HOST_CLI_BACKENDS, HostExecutorSchema, WorkflowHostConfigSchema } from "./workflow-host-config.js";
export type { HostCliBackend, HostExecutor, WorkflowHostConfig, WorkflowHostConfigInput } from "./workflow-host-config.js";
export { CatalogRequestSchema, WORKFLOW_OPERATIONS, WORKFLOW_TOOLS, parseRequestText, refusalOf, validateRequest, whatToDo } from "./workflow-tools.js";
export type { WorkflowOperation, WorkflowToolSpec } from "./workflow-tools.js";
export { createWorkflowHost } from "./workflow-host.js";
export type { CatalogReport, WorkflowHost, WorkflowHostOptions } from "./workflow-host.js";

export { createScriptedBackend } from "./scripted-backend.js";
export type { ScriptedBackend, ScriptedBackendOptions, ScriptedCall, ScriptedThread } from "./scripted-backend.js";
export { ScriptedReplySchema } from "./scripted-script.js";
export type { ScriptedExchange, ScriptedFailure, ScriptedReply, ScriptedResponder, ScriptedStep, ScriptedTurn } from "./scripted-script.js";
export { modelScriptedUsage } from "./scripted-usage.js";
export type { ScriptedUsageModel } from "./scripted-usage.js";

export { adapterInfo, createGrokBackend } from "./grok-backend.js";
export type { GrokBackendOptions } from "./grok-backend.js";
export { GROK_RESUME_FAILURE, createGrokParser } from "./grok-events.js";

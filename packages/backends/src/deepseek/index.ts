export { adapterInfo, createDeepSeekBackend } from "./deepseek-backend.js";
export type { DeepSeekBackendOptions } from "./deepseek-backend.js";
export { normalizeDeepSeekUsage } from "./deepseek-usage.js";

export { createDeepSeekBackend } from "./deepseek-backend.js";
export type { DeepSeekBackendOptions } from "./deepseek-backend.js";

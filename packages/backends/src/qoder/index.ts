export { adapterInfo, QODER_RESUME_FAILURE, createQoderBackend } from "./qoder-backend.js";
export type { QoderBackendOptions } from "./qoder-backend.js";

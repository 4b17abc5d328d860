export { adapterInfo, CURSOR_RESUME_FAILURE, createCursorBackend } from "./cursor-backend.js";
export type { CursorBackendOptions } from "./cursor-backend.js";

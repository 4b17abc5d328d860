export { createFsStore } from "./fs-store.js";
export { FsStoreOptionsSchema } from "./fs-store-options.js";
export type { FsStoreOptions, FsStoreWarning } from "./fs-store-options.js";

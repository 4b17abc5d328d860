import { defineConfig } from "tsup";
import { keelPackageConfig } from "../../tsup.base.js";

export default defineConfig(keelPackageConfig(["src/index.ts", "src/store/index.ts", "src/backend/index.ts", "src/provider/index.ts"]));

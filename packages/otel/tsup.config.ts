import { defineConfig } from "tsup";
import { keelPackageConfig } from "../../tsup.base.js";

export default defineConfig(keelPackageConfig(["src/index.ts"]));

// Loaded with `node --import` before `keel` starts (the CLI conventions tests): registers the
// module hooks of cli-break-packages-hooks.mjs with the packages to break (KEEL_TEST_BROKEN, comma
// separated; `@keel/*` breaks every one) and the file that lists every module resolved
// (KEEL_TEST_LOADED_LOG).
import { register } from "node:module";

register("./cli-break-packages-hooks.mjs", import.meta.url, {
  data: {
    broken: (process.env.KEEL_TEST_BROKEN ?? "").split(",").filter(Boolean),
    log: process.env.KEEL_TEST_LOADED_LOG ?? null,
  },
});

// Prints the version of the `ai` package this process resolves (`ai` 6 as installed, or ai 7
// under the ai 7 run's resolve hook): the README test checks its child ran the major it names.
import { readFileSync } from "node:fs";

let dir = new URL("./", import.meta.resolve("ai"));
for (;;) {
  try {
    const manifest = JSON.parse(readFileSync(new URL("package.json", dir), "utf8"));
    if (manifest.name === "ai") {
      console.log(manifest.version);
      break;
    }
  } catch {
    // no package.json here: one level up
  }
  const parent = new URL("../", dir);
  if (parent.href === dir.href) throw new Error("no package.json of ai above its entry");
  dir = parent;
}

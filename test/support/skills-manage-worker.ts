/**
 * Multi-process worker for managed skill libraries: after a line on stdin ("go"), either imports
 * a skill directory or applies a library update into a layer, then prints one `result <json>`
 * line (`ok` with the outcome, or the error's `code`) and exits 0.
 *
 * Usage: skills-manage-worker.ts import <layer> <role> <skill dir>
 *        skills-manage-worker.ts update <layer> <role> <library source>
 */
import { importSkill, updateLibrary } from "@keel/skills";

const [mode, layer, role, path] = process.argv.slice(2);
if (!mode || !layer || !role || !path) throw new Error("usage: skills-manage-worker.ts import|update <layer> <role> <path>");
process.stdout.write("loaded\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

const result =
  mode === "import"
    ? (await importSkill({ from: path, layer, role, routing: "unclassified", lockWaitMs: 20_000 })).map((report) => ({ name: report.name, digest: report.metadata.digest }))
    : (await updateLibrary({ source: path, layer, role, routing: "unclassified", apply: true, lockWaitMs: 20_000 })).map((report) =>
        report.entries.map((entry) => ({ name: entry.name, action: entry.action, done: entry.done })),
      );
process.stdout.write(`result ${JSON.stringify(result.isOk() ? { ok: result.value } : { code: result.error.code, message: result.error.message })}\n`);

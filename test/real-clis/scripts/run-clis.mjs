#!/usr/bin/env node
// `pnpm test:clis`: installs the six pinned CLIs into test/real-clis/node_modules with npm when
// they are missing (npm install from the committed lock file; no install scripts but
// Claude Code's and OpenCode's, which link their bundled binaries), then runs the real-CLI suite — inside a network namespace with only loopback when
// the machine allows it (root and `unshare -n`), else with the refusing proxy alone.
// Extra arguments go to vitest (e.g. `pnpm test:clis src/pi.spec.ts`).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
const pins = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).dependencies;

function installedVersion(name) {
  const file = join(packageDir, "node_modules", name, "package.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : null;
}

const stale = Object.entries(pins).filter(([name, version]) => installedVersion(name) !== version);
if (stale.length > 0) {
  console.log(`test:clis: installing ${stale.map(([name, version]) => `${name}@${version}`).join(", ")} with npm (about 1.5 GB)`);
  // `npm install` from the committed lock, not `npm ci`: the lock holds opencode-ai's native
  // binary for this platform only, and `npm ci` refuses a lock without the other platforms'
  // optional packages. The versions are exact pins, so the install cannot drift.
  const install = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], { cwd: packageDir, stdio: "inherit" });
  // A failed install is not fatal here: each CLI's "is installed" test then fails, loudly.
  if (install.status !== 0) console.error(`test:clis: npm install failed (exit ${install.status}); the missing CLIs will fail their tests`);
  // The two install scripts needed: Claude Code's and OpenCode's postinstalls link their platform
  // binary (shipped in a registry package, nothing is fetched) over the stub in bin/.
  const linked = ["@anthropic-ai/claude-code", "opencode-ai"];
  const link = spawnSync("npm", ["rebuild", ...linked, "--ignore-scripts=false", "--loglevel=error"], { cwd: packageDir, stdio: "inherit" });
  if (link.status !== 0) console.error(`test:clis: the postinstall of ${linked.join(" or ")} failed (exit ${link.status}); their tests will fail`);
}

const vitest = join(dirname(createRequire(join(packageDir, "..", "..", "package.json")).resolve("vitest/package.json")), "vitest.mjs");
const vitestArgs = [vitest, "run", "--config", join(packageDir, "vitest.config.ts"), ...process.argv.slice(2)];

function namespaceProblem() {
  if (process.platform !== "linux") return "not Linux";
  if (process.getuid?.() !== 0) return "not root (unshare -n needs CAP_SYS_ADMIN)";
  const probe = spawnSync("unshare", ["-n", "ip", "link", "set", "lo", "up"], { stdio: "ignore" });
  if (probe.error || probe.status !== 0) return "unshare -n or ip is not available here";
  return null;
}

const problem = namespaceProblem();
let run;
if (problem === null) {
  console.log("test:clis: inside a network namespace with only loopback (unshare -n)");
  run = spawnSync("unshare", ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", process.execPath, ...vitestArgs], {
    stdio: "inherit",
    env: { ...process.env, KEEL_REAL_CLIS_NETNS: "1" },
  });
} else {
  console.log(`test:clis: no network namespace (${problem}): relying on the refusing proxy and the CLIs' offline settings`);
  run = spawnSync(process.execPath, vitestArgs, { stdio: "inherit", env: { ...process.env, KEEL_REAL_CLIS_NETNS: "0", KEEL_REAL_CLIS_NETNS_REASON: problem } });
}
console.log(`test:clis: ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(run.status ?? 1);

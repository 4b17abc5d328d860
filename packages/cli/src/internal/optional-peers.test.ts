import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { renderDoctorReport } from "./doctor-report.js";
import { runDoctor } from "./doctor-run.js";
import { checkOptionalPeers, findOptionalPeer, missingOptionalPeer, OPTIONAL_PEER_FEATURES, OPTIONAL_PEERS, optionalPeerInstall } from "./optional-peers.js";

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}
const read = (file: string): Manifest => JSON.parse(readFileSync(new URL(file, import.meta.url), "utf8")) as Manifest;
const CLI = read("../../package.json");
const AI_SDK = read("../../../ai-sdk/package.json");
const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-optional-peers-"));
  scratch.push(dir);
  return dir;
}
/** Installs a stand-in package (a package.json with a version) under `root/node_modules`. */
function install(root: string, name: string, version: string): void {
  mkdirSync(path.join(root, "node_modules", name), { recursive: true });
  writeFileSync(path.join(root, "node_modules", name, "package.json"), JSON.stringify({ name, version }));
}

describe("the optional peers of @keel/cli", () => {
  it("are each under exactly one feature, declared optional in package.json, and never a dependency", () => {
    expect(OPTIONAL_PEER_FEATURES.flatMap((feature) => feature.peers).sort()).toEqual([...OPTIONAL_PEERS].sort());
    for (const peer of OPTIONAL_PEERS) {
      expect(CLI.peerDependenciesMeta[peer]?.optional, peer).toBe(true);
      expect(Object.keys(CLI.dependencies), peer).not.toContain(peer);
    }
  });

  it("declare the AI SDK demo's packages with the ranges @keel/ai-sdk is proven with; the Claude Agent SDK without a range", () => {
    expect(CLI.peerDependencies["@keel/ai-sdk"]).toBe("workspace:^");
    expect(CLI.peerDependencies["ai"]).toBe(AI_SDK.peerDependencies["ai"]);
    // The provider versions @keel/ai-sdk's tests run (2.x with ai 6, 3.x with ai 7 under an npm alias): each major is in the range.
    const proven = [AI_SDK.devDependencies["@ai-sdk/openai-compatible"]!, AI_SDK.devDependencies["@ai-sdk/openai-compatible-v3"]!].map((spec) => spec.replace(/^npm:.+@/, ""));
    expect(proven.map((version) => version.split(".")[0])).toEqual(["2", "3"]);
    expect(CLI.peerDependencies["@ai-sdk/openai-compatible"]).toBe(proven.map((version) => `^${version.split(".")[0]}.0.0`).join(" || "));
    // A peerDependencies entry made pnpm install the SDK (and its ~400 MiB binary) into the workspace.
    expect(CLI.peerDependencies["@anthropic-ai/claude-agent-sdk"]).toBeUndefined();
  });

  it("name the package a failed import misses, not one that only starts with its name", () => {
    const missing = (name: string) => Object.assign(new Error(`Cannot find package '${name}' imported from /x/y.js`), { code: "ERR_MODULE_NOT_FOUND" });
    expect(missingOptionalPeer(missing("ai"))).toBe("ai");
    expect(missingOptionalPeer(missing("@anthropic-ai/claude-agent-sdk"))).toBe("@anthropic-ai/claude-agent-sdk");
    expect(missingOptionalPeer(missing("@ai-sdk/openai-compatible"))).toBe("@ai-sdk/openai-compatible");
    expect(missingOptionalPeer(missing("ai-v7"))).toBeUndefined();
    expect(missingOptionalPeer(missing("@ai-sdk/openai"))).toBeUndefined();
    expect(missingOptionalPeer(new Error("Cannot find package 'ai'"))).toBe("ai");
    expect(missingOptionalPeer(Object.assign(new Error("Cannot find package 'ai'"), { code: "EACCES" }))).toBeUndefined();
  });

  it("install with the other peers of their feature, each line in the README's peers section", () => {
    expect(optionalPeerInstall("ai")).toBe("npm install @keel/ai-sdk ai @ai-sdk/openai-compatible");
    expect(optionalPeerInstall("@keel/mcp")).toBe("npm install @keel/mcp");
    expect(optionalPeerInstall("@opentelemetry/resources")).toBe(
      "npm install @keel/otel @opentelemetry/api @opentelemetry/sdk-trace-base @opentelemetry/exporter-trace-otlp-http @opentelemetry/resources",
    );
    for (const feature of OPTIONAL_PEER_FEATURES) {
      expect(README, feature.feature).toMatch(new RegExp(`^npm install -g @keel/cli ${feature.peers.join(" ")} +# ${feature.feature.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    }
  });

  it("are found beside the CLI, and the demo's SDKs in the project too; keel doctor lists them with the install line", async () => {
    const cliDir = path.join(tempDir(), "lib", "node_modules", "@keel", "cli", "dist");
    mkdirSync(cliDir, { recursive: true });
    const globalRoot = path.join(cliDir, "..", "..", "..", "..");
    install(globalRoot, "@keel/mcp", "0.3.0");
    install(globalRoot, "@keel/ai-sdk", "0.2.0");
    const project = tempDir();
    install(project, "ai", "7.0.185");
    install(project, "@keel/store-sqlite", "0.1.0");

    expect(findOptionalPeer("@keel/mcp", [cliDir])).toEqual({ name: "@keel/mcp", version: "0.3.0", path: path.join(globalRoot, "node_modules", "@keel/mcp") });
    expect(findOptionalPeer("@keel/otel", [cliDir, project])).toEqual({ name: "@keel/otel", version: null, path: null });
    const checks = Object.fromEntries(checkOptionalPeers(cliDir, project).map((check) => [check.feature, check]));
    expect(checks["keel mcp and keel workflow"]).toMatchObject({ installed: true, peers: [{ name: "@keel/mcp", version: "0.3.0" }] });
    // The SQL store is imported from beside the CLI only: the project's copy does not count.
    expect(checks["sqlite:<file> store URLs"]).toMatchObject({ installed: false, install: "npm install @keel/store-sqlite" });
    // The AI SDK demo finds its packages beside the CLI or in the project: two of three here.
    expect(checks["keel demo --backend ai-sdk"]!.installed).toBe(false);
    expect(checks["keel demo --backend ai-sdk"]!.peers.map((peer) => peer.version)).toEqual(["0.2.0", "7.0.185", null]);

    const empty = tempDir();
    const report = (await runDoctor({ nodeVersion: "22.12.0", dir: path.join(empty, ".keel"), env: { PATH: empty }, peers: { cliDir, cwd: project } }))._unsafeUnwrap();
    expect(report.optionalPeers).toEqual(checkOptionalPeers(cliDir, project));
    const text = renderDoctorReport(report, { color: false });
    expect(text).toContain(`Optional peers (installed beside @keel/cli only for what needs them): 1 of ${OPTIONAL_PEER_FEATURES.length} installed`);
    expect(text).toMatch(/^ {2}keel mcp and keel workflow +installed +@keel\/mcp 0\.3\.0$/m);
    expect(text).toMatch(/^ {2}keel demo --backend ai-sdk +not installed +missing @ai-sdk\/openai-compatible: npm install @keel\/ai-sdk ai @ai-sdk\/openai-compatible$/m);
    expect(text).toMatch(/^ {2}keel demo --backend claude-agent-sdk +not installed +npm install @anthropic-ai\/claude-agent-sdk$/m);
    expect(report.ok).toBe(true);
  });
});

// Test helper (not shipped): runs an adapter against its fake CLI, for the conformance suite and
// the adapter's own tests.
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BackendConformanceHarness, BackendConformanceTarget } from "@keel/testkit/backend";
import type { Backend } from "@keel/backend";
import type { CliBackendOptions } from "../kit/index.js";

/** One recorded invocation of a fake CLI. */
export interface FakeInvocation {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  scenario: string;
}

/** A harness plus what the adapter tests inspect. */
export interface FakeCliHarness extends BackendConformanceHarness {
  root: string;
  state: string;
  invocations(): Promise<FakeInvocation[]>;
}

/** Options forwarded to the adapter factory, with the fake's command override. */
export function fakeCliOptions(script: URL, state: string): CliBackendOptions {
  return { command: process.execPath, commandArgs: [fileURLToPath(script)], env: { KEEL_FAKE_STATE: state }, killGraceMs: 500 };
}

export async function createFakeCliHarness<O extends CliBackendOptions>(
  name: string,
  create: (options: O) => Backend,
  script: URL,
  options: Omit<O, keyof CliBackendOptions> | Partial<O> = {},
): Promise<FakeCliHarness> {
  const root = await mkdtemp(join(tmpdir(), `keel-${name}-`));
  const state = join(root, "state");
  const cwd = join(root, "work");
  await mkdir(state, { recursive: true });
  await mkdir(cwd, { recursive: true });
  const base = fakeCliOptions(script, state);
  const backend = create({ ...base, ...options, env: { ...base.env, ...(options as CliBackendOptions).env } } as O);
  const readJsonl = async <T>(file: string): Promise<T[]> => {
    const text = await readFile(join(state, file), "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as T);
  };
  return {
    backend,
    cwd,
    root,
    state,
    scenario: (scenario) => ({ env: { KEEL_FAKE_SCENARIO: scenario } }),
    spawnedPids: async () => (await readJsonl<number[]>("pids.jsonl")).flat(),
    invocations: () => readJsonl<FakeInvocation>("invocations.jsonl"),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The conformance target of an adapter run against its fake CLI. */
export function fakeCliTarget<O extends CliBackendOptions>(
  name: string,
  resumable: boolean,
  create: (options: O) => Backend,
  script: URL,
  options: Partial<O> = {},
): BackendConformanceTarget {
  return {
    name: `${name} (fake CLI)`,
    resumable,
    scenarios: ["success", "unknown_events", "in_band_error", "transient_error", "garbage", "hang"],
    setup: () => createFakeCliHarness(name, create, script, options),
  };
}

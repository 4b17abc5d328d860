import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Backend } from "@keel/backend";
import { createFakeProviderSandbox, fakeProviderSetup, startFakeProvider, type FakeProvider, type FakeProviderCli, type FakeProviderRequest, type FakeReply } from "@keel/testkit/provider";
import { createCliBackendById } from "./demo-backends.js";
import { demoProviderReply, type DemoProviderContext } from "./demo-provider-script.js";

/** A real CLI backend pointed at a running fake provider that plays the demo mission. */
export interface DemoFakeProviderBackend {
  backend: Backend;
  provider: FakeProvider;
  /** Stops the provider. */
  close(): Promise<void>;
}

/**
 * Starts the fake provider (127.0.0.1, every outside connection refused) scripted with
 * {@link demoProviderReply}, and builds the Keel adapter of `cli` pointed at it, with its own
 * `HOME`, config directory, XDG directories and `TMPDIR` under `<dir>/cli` and only `PATH` of
 * the caller's environment (the CLI is the one installed on `PATH`). Closing it writes what the
 * server saw to `<dir>/cli/provider-requests.jsonl` and `provider-failures.json`. `reply` answers
 * each model call (default: the demo mission's {@link demoProviderReply}).
 */
export async function startDemoFakeProvider(
  cli: FakeProviderCli,
  dir: string,
  workspace: string,
  path: string,
  reply: (request: FakeProviderRequest, context: DemoProviderContext) => FakeReply = demoProviderReply,
): Promise<DemoFakeProviderBackend> {
  const root = join(dir, "cli");
  const sandbox = await createFakeProviderSandbox(root, path);
  let readTool: (file: string) => { name: string; arguments: Record<string, unknown> } = () => ({ name: "read", arguments: {} });
  let sideCall: (request: FakeProviderRequest) => FakeReply | undefined = () => undefined;
  const started = await startFakeProvider({ respond: (request) => sideCall(request) ?? reply(request, { workspace, readTool }) });
  if (started.isErr()) throw started.error;
  const provider = started.value;
  const setup = fakeProviderSetup(cli, provider, sandbox, sandbox.envWith(provider));
  readTool = setup.readTool;
  sideCall = setup.sideCall;
  for (const [file, text] of Object.entries(setup.files)) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  const close = async () => {
    await provider.close();
    // What the model server saw, for the curious and for tests: one line per request, and
    // anything it could not answer as scripted (an outside host, an unknown route).
    const lines = provider.requests.map((request) =>
      JSON.stringify({ index: request.index, method: request.method, path: request.path, format: request.format, reply: request.reply }),
    );
    await writeFile(join(root, "provider-requests.jsonl"), lines.length > 0 ? `${lines.join("\n")}\n` : "");
    await writeFile(join(root, "provider-failures.json"), `${JSON.stringify(provider.failures, null, 2)}\n`);
  };
  const backend = createCliBackendById(cli, { inheritEnv: false, env: setup.env, ...setup.adapter });
  if (backend.isErr()) {
    await provider.close();
    throw backend.error;
  }
  return { backend: backend.value, provider, close };
}

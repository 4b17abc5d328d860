import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { FakeProvider } from "./provider-server.js";

/** The private directories of one CLI run against a fake provider, made by {@link createFakeProviderSandbox}. */
export interface FakeProviderSandbox {
  /** `HOME`. */
  home: string;
  /** The CLI's own config directory (`CODEX_HOME`, `PI_CODING_AGENT_DIR` …), for `fakeProviderSetup`'s dirs. */
  config: string;
  /** `TMPDIR` (and `TMP`, `TEMP`). */
  tmp: string;
  /**
   * The CLI's whole base environment (run it with `inheritEnv: false`), every outside connection
   * routed to `provider`'s refusing proxy; pass it to `fakeProviderSetup` as `baseEnv`.
   */
  envWith(provider: Pick<FakeProvider, "proxyEnv">): Record<string, string>;
}

/**
 * Makes `home`, `config`, `tmp` and the XDG directories of one CLI run under `root` and gives
 * its base environment: `PATH` as given and nothing else of the caller's (no credential of the
 * machine), `HOME`, `TMPDIR` and XDG there, C.UTF-8, no colour, CI, telemetry and update checks
 * off, npm offline (`NPM_CONFIG_OFFLINE`, which OpenCode's own package install reads too). The demo's `--fake-provider` and the real-CLI suite isolate a CLI this way.
 *
 * @example
 * ```ts
 * const sandbox = await createFakeProviderSandbox(join(dir, "cli"), process.env.PATH ?? "/usr/bin:/bin");
 * const setup = fakeProviderSetup("pi", provider, sandbox, sandbox.envWith(provider));
 * ```
 */
export async function createFakeProviderSandbox(root: string, path: string): Promise<FakeProviderSandbox> {
  const home = join(root, "home");
  const config = join(root, "config");
  const tmp = join(root, "tmp");
  const xdg = (name: string) => join(root, "xdg", name);
  for (const made of [home, config, tmp, xdg("config"), xdg("data"), xdg("cache"), xdg("state")]) await mkdir(made, { recursive: true });
  const env: Record<string, string> = {
    PATH: path,
    HOME: home,
    TMPDIR: tmp,
    TMP: tmp,
    TEMP: tmp,
    XDG_CONFIG_HOME: xdg("config"),
    XDG_DATA_HOME: xdg("data"),
    XDG_CACHE_HOME: xdg("cache"),
    XDG_STATE_HOME: xdg("state"),
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    CI: "1",
    DO_NOT_TRACK: "1",
    NO_UPDATE_NOTIFIER: "1",
    NPM_CONFIG_UPDATE_NOTIFIER: "false",
    // Also what keeps OpenCode off the registry: it installs @opencode-ai/plugin into its config
    // directory on every run, whatever its OPENCODE_DISABLE_* switches say, with the npm it bundles.
    NPM_CONFIG_OFFLINE: "true",
  };
  return { home, config, tmp, envWith: (provider) => ({ ...env, ...provider.proxyEnv() }) };
}

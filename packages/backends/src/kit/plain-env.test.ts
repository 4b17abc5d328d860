import { KeelError } from "@keel/core";
import { describe, expect, it } from "vitest";
import { detectBackends } from "../backend-detect.js";
import { createClaudeCodeBackend } from "../claude-code/claude-code-backend.js";
import { createCodexBackend } from "../codex/codex-backend.js";
import { createCopilotBackend } from "../copilot/copilot-backend.js";
import { createCursorBackend } from "../cursor/cursor-backend.js";
import { createDeepSeekBackend } from "../deepseek/deepseek-backend.js";
import { createGeminiBackend } from "../gemini/gemini-backend.js";
import { createGrokBackend } from "../grok/grok-backend.js";
import { createOpenCodeBackend } from "../opencode/opencode-backend.js";
import { createPiBackend } from "../pi/pi-backend.js";
import { createQoderBackend } from "../qoder/qoder-backend.js";
import { withPlainEnv } from "./plain-env.js";

const trap = (): never => {
  throw new Error("hostile proxy trap");
};
/** Options whose every read throws, and options whose `env` does. */
const hostile = (): [string, unknown][] => [
  ["options whose reads throw", new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap })],
  ["an env whose reads throw", { env: new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap }) }],
  [
    "a throwing env getter",
    Object.defineProperty({}, "env", {
      enumerable: true,
      get: trap,
    }),
  ],
];

const FACTORIES: [string, (options: never) => unknown][] = [
  ["createClaudeCodeBackend", createClaudeCodeBackend],
  ["createCodexBackend", createCodexBackend],
  ["createCopilotBackend", createCopilotBackend],
  ["createCursorBackend", createCursorBackend],
  ["createDeepSeekBackend", createDeepSeekBackend],
  ["createGeminiBackend", createGeminiBackend],
  ["createGrokBackend", createGrokBackend],
  ["createOpenCodeBackend", createOpenCodeBackend],
  ["createPiBackend", createPiBackend],
  ["createQoderBackend", createQoderBackend],
];

describe("withPlainEnv", () => {
  it("copies an env into a plain object and leaves options whose reading throws to validation", () => {
    const env = Object.create({ inherited: "no" }) as Record<string, string>;
    env["PATH"] = "/bin";
    expect(withPlainEnv({ env, cwd: "/x" })).toEqual({ env: { PATH: "/bin" }, cwd: "/x" });
    for (const [, value] of hostile()) expect(withPlainEnv(value)).toBe(value);
  });

  it.each(FACTORIES)("lets %s refuse hostile options with invalid_input, never a raw error", (_name, create) => {
    for (const [label, value] of hostile()) {
      let thrown: unknown;
      try {
        create(value as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, label).toBeInstanceOf(KeelError);
      expect((thrown as KeelError).code, label).toBe("invalid_input");
    }
  });

  it("lets detectBackends answer hostile options with invalid_input", async () => {
    for (const [label, value] of hostile()) {
      const result = await detectBackends(value as never);
      expect(result.isErr(), label).toBe(true);
      expect(result._unsafeUnwrapErr().code, label).toBe("invalid_input");
    }
  });
});
